"""``manage.py memory_optimize [--user …] [--force]``: the optimizer without django-q2 (cron).

Like the django-q2 sweep, it first deletes the notes past their ``valid_until`` and purges merge
snapshots older than ``MERGE_RETENTION_DAYS``; its runs use ``AGENT_MEMORY["OPTIMIZER"]``.
"""

from __future__ import annotations

import logging
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from agent_memory import get_memory
from agent_memory.optimizer import runner

from ..people import person_key

logger = logging.getLogger("agent_memory.optimizer")


class Command(BaseCommand):
    help = (
        "Merge duplicate memory notes: every person who is due, or the given people. "
        "For hosts without a django-q2 cluster (run it from cron every few minutes)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--user",
            action="append",
            default=[],
            help="A person's primary key or username (repeat for several).",
        )
        parser.add_argument(
            "--force", action="store_true", help="Run even if the person is not due yet."
        )
        parser.add_argument(
            "--model",
            default=None,
            help="Model alias of AGENT_MEMORY['MODELS'] (default: the one of the last turn).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        memory = get_memory()
        # Notes past their valid_until are deleted even with the optimizer off.
        expired = runner.purge_expired_notes(memory.store)
        if expired:
            self.stdout.write(f"Deleted {expired} note(s) past their valid_until.")
        if memory.optimizer_options is None:
            raise CommandError("The optimizer is off (AGENT_MEMORY['OPTIMIZER'] is False).")
        store = memory.store
        purged = runner.purge_expired(store)
        if purged:
            self.stdout.write(f"Purged {purged} expired merge snapshot(s).")
        if options["user"]:
            people = [(person_key(value), None) for value in options["user"]]
        else:
            people = list(store.due_optimizer_users(runner.now()))
        for user_id, last_model in people:
            try:
                result = self._optimize(memory, user_id, last_model, options)
            except Exception as error:
                # Logged with its traceback; the next person still runs and the command exits 0.
                logger.exception("Memory optimizer for person %s failed.", user_id)
                self.stderr.write(f"person {user_id}: failed — {type(error).__name__}: {error}")
                continue
            line = (
                f"person {user_id}: {result.status} "
                f"({result.applied} applied, {result.rejected} rejected)"
            )
            if result.reason:
                line += f" — {result.reason}"
            self.stdout.write(line)
        if not people:
            self.stdout.write("Nobody is due.")

    @staticmethod
    def _optimize(memory: Any, user_id: Any, last_model: str | None, options: Any) -> Any:
        model = options["model"] or last_model or memory.store.get_optimizer_state(user_id).model
        return memory.optimize(user_id, model=model or "default", force=options["force"])
