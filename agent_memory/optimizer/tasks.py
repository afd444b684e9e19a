"""django-q2 entry points: the periodic sweep, one person's run, and the schedule itself.

The schedule is created from ``post_migrate`` (never from ``ready()``), with ``update_or_create``
on a fixed name, so running ``migrate`` again never adds a second one. Every cluster may run the
sweep; the per-person claim makes a duplicate run a harmless "skipped".
"""

from __future__ import annotations

import logging
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from django.db import DatabaseError, transaction

from ..conf import memory_settings

logger = logging.getLogger("agent_memory.optimizer")

SCHEDULE_NAME = "agent_memory.optimizer.sweep"
SWEEP_FUNC = "agent_memory.optimizer.tasks.sweep"
TASK_GROUP = "agent_memory.optimizer"


def _memory(options: dict[str, Any] | None = None, using: str | None = None) -> Any:
    """The site's memory (:func:`~agent_memory.get_memory`), on the database the task was
    enqueued for and with the optimizer options given in code, when there are any."""
    from ..memory import LongTermMemory
    from ..site import build_store, get_memory

    memory = get_memory()
    store = memory.store
    if using is not None and getattr(store, "using", using) != using:
        store = build_store(using=using)
    elif not options:
        return memory
    if options:
        return LongTermMemory(store=store, optimizer=options)
    return LongTermMemory(store=store)


def optimize_person(
    user_id: Any,
    model: str = "default",
    options: dict[str, Any] | None = None,
    using: str | None = None,
) -> str:
    """One person's run (enqueued by ``after_turn`` and the sweep); returns the status.

    Never raises: whatever goes wrong is logged and answered ``"failed"`` (the run itself is
    closed as failed, with the backoff, by ``optimize``).
    """
    try:
        result = _memory(options, using).optimize(user_id, model=model)
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


#: How many due people one queued task runs, one after another.
BATCH_SIZE = 100
BATCH_FUNC = "agent_memory.optimizer.tasks.optimize_people"


def optimize_people(people: list[list[Any]], using: str | None = None) -> list[str]:
    """A batch of the sweep: the runs of ``people`` (``[user_id, model alias]`` pairs), one
    after another, each with the optimizer options given in code with the person's last turn
    (read for the whole batch in one query). A person whose run raises is logged as
    ``"failed"`` and the batch goes on with the next one. Returns the statuses in order."""
    store = _memory(using=using).store
    options = store.get_optimizer_options([user_id for user_id, _ in people])
    statuses = []
    for user_id, model in people:
        try:
            statuses.append(optimize_person(user_id, model, options.get(user_id) or None, using))
        except Exception:
            logger.exception("The memory optimizer failed for person %s.", user_id)
            statuses.append("failed")
    return statuses


def sweep(using: str | None = None) -> int:
    """Delete the notes past their ``valid_until``, purge expired snapshots (at most hourly,
    :func:`~.runner.purge_expired`), then enqueue the people who are due (a person who turned
    memory off is not), :data:`BATCH_SIZE` to a task (:func:`optimize_people`).

    One query finds the due people (ids and model aliases, on an index), and each batch is one
    queued task, so a sweep costs a few queries per hundred due people whatever the site's size.
    Returns how many people were enqueued.
    """
    from django_q.brokers import get_broker
    from django_q.tasks import async_task

    from . import runner

    memory = _memory(using=using)
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
            batch = [[user_id, model] for user_id, model in due[start : start + BATCH_SIZE]]
            async_task(
                BATCH_FUNC,
                batch,
                using,
                task_name=f"agent_memory optimize {len(batch)} from {batch[0][0]}",
                group=TASK_GROUP,
                broker=broker,
            )
    return len(due)


def _one_broker_transaction() -> AbstractContextManager[object]:
    """With django-q2's ORM broker, the sweep's tasks are queued in one transaction: outside
    one the broker closes and reopens the database connection for every task it queues when
    ``CONN_MAX_AGE`` is 0 (Django's default)."""
    from django_q.conf import Conf

    return transaction.atomic(using=Conf.ORM) if Conf.ORM else nullcontext()


def ensure_schedule(
    sender: Any = None, using: str = "default", apps: Any = None, **kwargs: Any
) -> None:
    """``post_migrate`` receiver: create or update the sweep's schedule (or remove it when the
    optimizer is off)."""
    from django.apps import apps as global_apps

    registry = apps or global_apps
    try:
        schedule_model = registry.get_model("django_q", "Schedule")
    except LookupError:
        return  # django-q2 is not installed: cron runs manage.py memory_optimize instead
    rows = schedule_model.objects.using(using)
    options = memory_settings.OPTIMIZER
    try:
        with transaction.atomic(using=using):
            if options is False:
                rows.filter(name=SCHEDULE_NAME).delete()
                return
            rows.update_or_create(
                name=SCHEDULE_NAME,
                defaults={
                    "func": SWEEP_FUNC,
                    "schedule_type": "I",  # Schedule.MINUTES
                    "minutes": int(options["sweep_minutes"]),
                    "repeats": -1,
                },
            )
    except DatabaseError:
        # django_q's tables are not migrated on this database (e.g. a router keeps them away).
        logger.warning("The memory optimizer's schedule could not be saved on %r.", using)
