"""``manage.py memory_check [--repair] [--user …] [--database …]``: recount every person's notes.

The limits are checked against counts kept per person (notes, characters) and the duplicate
check looks notes up by a key of their text. Every write of the app keeps both true; notes
written around the app (raw SQL, a restored backup, ``QuerySet.update``) can leave them stale.
This command recounts each person under their write lock and reports any drift; ``--repair``
stores the true figures.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import router

from agent_memory.models import MemoryNote, MemoryUserLock
from agent_memory.stores.orm import DjangoStore
from agent_memory.stores.orm_notes import CountCheck

from ..people import person_key


class Command(BaseCommand):
    help = (
        "Recount every person's memory notes and characters and compare them with the counts "
        "the limits are checked against; --repair fixes any drift."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--repair", action="store_true", help="Store the true counts where they drifted."
        )
        parser.add_argument(
            "--user",
            action="append",
            default=[],
            help="Only this person: a primary key or username (repeat for several).",
        )
        parser.add_argument(
            "--database",
            default=None,
            help="Database alias (default: where the router sends memory writes).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        using = options["database"] or router.db_for_write(MemoryNote) or "default"
        store = DjangoStore(using=using)
        if options["user"]:
            people = [person_key(value) for value in options["user"]]
        else:
            with_notes = MemoryNote.objects.using(using).values_list("user_id", flat=True)
            counted = MemoryUserLock.objects.using(using).values_list("user_id", flat=True)
            people = sorted(set(with_notes.distinct()) | set(counted), key=str)
        drifted = []
        for user_id in people:
            check = store.check_counts(user_id, repair=options["repair"])
            if check.drifted:
                drifted.append(check)
                self.stdout.write(self._describe(check, options["repair"]))
        summary = f"Checked {len(people)} people: {len(drifted)} with drifted counts"
        if drifted and options["repair"]:
            self.stdout.write(f"{summary}, repaired.")
        elif drifted:
            self.stdout.write(f"{summary}.")
            raise CommandError(
                "Some counts drifted from the notes; run `manage.py memory_check --repair` to "
                "store the true figures."
            )
        else:
            self.stdout.write(f"{summary}.")

    @staticmethod
    def _describe(check: CountCheck, repaired: bool) -> str:
        stored = (
            f"{check.stored.notes} notes, {check.stored.chars} characters"
            if check.stored
            else "no counts"
        )
        line = (
            f"person {check.user_id}: stored {stored}; counted {check.true.notes} notes, "
            f"{check.true.chars} characters"
        )
        if check.stale_text_keys:
            line += f"; {check.stale_text_keys} stale text key(s)"
        return line + (" (repaired)" if repaired else "")
