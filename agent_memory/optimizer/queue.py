"""Handing the optimizer to django-q2: the one place a run is queued, and the sweep's schedule.

``after_turn`` queues its person and the sweep queues the due people a hundred to a task, both
with :func:`enqueue_run`. The tasks (:mod:`agent_memory.tasks`) are named by their dotted paths,
which django-q2 stores with each queued task and in the schedule, so nothing here imports the
front door they build.

The schedule is created from ``post_migrate`` (never from ``ready()``), with ``update_or_create``
on a fixed name, so running ``migrate`` again never adds a second one.
"""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Sequence
from typing import Any

from django.db import DatabaseError, transaction

from ..conf import memory_settings

logger = logging.getLogger("agent_memory.optimizer")

#: The django-q2 task that runs a batch of people (stored with every queued task).
OPTIMIZE_FUNC = "agent_memory.tasks.optimize_people"
#: The django-q2 group of the optimizer's tasks.
TASK_GROUP = "agent_memory.optimizer"
#: The name of the sweep's schedule (kept: ``migrate`` finds the row by it) and its task.
SCHEDULE_NAME = "agent_memory.optimizer.sweep"
SWEEP_FUNC = "agent_memory.tasks.sweep"


def can_enqueue() -> bool:
    """Whether django-q2 is installed (without it, runs happen in the process that asks)."""
    return importlib.util.find_spec("django_q") is not None


def enqueue_run(
    people: Sequence[tuple[Any, str]], using: str | None = None, *, broker: Any = None
) -> None:
    """Queue one django-q2 task that runs ``people`` (``(user_id, model alias)`` pairs) one
    after another on the database ``using`` (``None``: the configured store's).

    ``broker`` is the django-q2 broker to queue on (one for many calls saves reconnecting);
    ``None``: django-q2's configured one. Raises ``ImportError`` without django-q2 (check
    :func:`can_enqueue`) and whatever the broker raises when it cannot queue.
    """
    from django_q.tasks import async_task

    batch = [[user_id, model] for user_id, model in people]
    if not batch:
        return
    first = batch[0][0]
    name = (
        f"agent_memory optimize {first}"
        if len(batch) == 1
        else f"agent_memory optimize {len(batch)} from {first}"
    )
    async_task(OPTIMIZE_FUNC, batch, using, task_name=name, group=TASK_GROUP, broker=broker)


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
