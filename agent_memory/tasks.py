"""django-q2 entry points of the optimizer: the periodic sweep, a batch of people's runs, one
person's run, and the sweep's schedule.

They sit at the top of the package because they build the site's memory
(:func:`~agent_memory.get_memory`); the optimizer below queues them by dotted path
(:func:`~agent_memory.optimizer.queue.enqueue_run`). Every run uses the optimizer settings of
``AGENT_MEMORY["OPTIMIZER"]``: options given in code to a ``LongTermMemory`` apply to that
object's own calls only, nothing is stored per person.

The schedule (:func:`~agent_memory.optimizer.queue.ensure_schedule`) runs :func:`sweep` every
``sweep_minutes``. Every cluster may run the sweep; the per-person claim makes a duplicate run a
harmless "skipped".
"""

from __future__ import annotations

import logging
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from django.db import transaction

from .memory import LongTermMemory
from .optimizer import runner
from .optimizer.queue import OPTIMIZE_FUNC, enqueue_run
from .site import build_store, get_memory

logger = logging.getLogger("agent_memory.optimizer")

#: The task of a batch of people (``after_turn`` queues a batch of one).
BATCH_FUNC = OPTIMIZE_FUNC
#: How many due people one queued task runs, one after another.
BATCH_SIZE = 100


def _memory(using: str | None = None) -> LongTermMemory:
    """The site's memory, on the database the task was queued for."""
    memory = get_memory()
    if using is None or getattr(memory.store, "using", using) == using:
        return memory
    return LongTermMemory(store=build_store(using=using))


def optimize_person(user_id: Any, model: str = "default", using: str | None = None) -> str:
    """One person's run; returns the status.

    Never raises: whatever goes wrong is logged and answered ``"failed"`` (the run itself is
    closed as failed, with the backoff, by ``optimize``).
    """
    try:
        memory = _memory(using)
    except Exception:
        logger.exception("Memory optimizer for person %s failed.", user_id)
        return "failed"
    return _run(memory, user_id, model)


def optimize_people(people: list[list[Any]], using: str | None = None) -> list[str]:
    """The task :func:`~agent_memory.optimizer.queue.enqueue_run` queues: the runs of
    ``people`` (``[user_id, model alias]`` pairs), one after another on one memory. A person
    whose run raises is logged as ``"failed"`` and the batch goes on with the next one.
    Returns the statuses in order."""
    memory = _memory(using)
    return [_run(memory, user_id, model) for user_id, model in people]


def _run(memory: LongTermMemory, user_id: Any, model: str) -> str:
    """The person's run on ``memory``, logged; ``"failed"`` for whatever it raises."""
    try:
        result = memory.optimize(user_id, model=model)
    except Exception:
        logger.exception("Memory optimizer for person %s failed.", user_id)
        return "failed"
    logger.info(
        "Memory optimizer for person %s: %s (%s applied, %s rejected) %s",
        user_id,
        result.status,
        result.applied,
        result.rejected,
        result.reason,
    )
    return str(result.status)


def sweep(using: str | None = None) -> int:
    """Delete the notes past their ``valid_until``, purge expired snapshots (at most hourly,
    :func:`~agent_memory.optimizer.runner.purge_expired`), then queue the people who are due
    (a person who turned memory off is not), :data:`BATCH_SIZE` to a task
    (:func:`optimize_people`).

    One query finds the due people (ids and model aliases, on an index), and each batch is one
    queued task, so a sweep costs a few queries per hundred due people whatever the site's size.
    Returns how many people were queued.
    """
    from django_q.brokers import get_broker

    memory = _memory(using)
    # Notes past their valid_until go first, whether or not the optimizer runs.
    runner.purge_expired_notes(memory.store)
    if memory.optimizer_options is None:
        return 0
    store = memory.store
    runner.purge_expired(store)
    due = store.due_optimizer_users(runner.now())
    broker = get_broker() if due else None
    with _one_broker_transaction():
        for start in range(0, len(due), BATCH_SIZE):
            enqueue_run(due[start : start + BATCH_SIZE], using, broker=broker)
    return len(due)


def _one_broker_transaction() -> AbstractContextManager[object]:
    """With django-q2's ORM broker, the sweep's tasks are queued in one transaction: outside
    one the broker closes and reopens the database connection for every task it queues when
    ``CONN_MAX_AGE`` is 0 (Django's default)."""
    from django_q.conf import Conf

    return transaction.atomic(using=Conf.ORM) if Conf.ORM else nullcontext()
