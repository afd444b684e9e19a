"""``manage.py memory_embed [--user …] [--all]``: compute the notes' vectors for search by meaning.

Search embeds missing vectors by itself, a person at a time; this command does it ahead for
everyone, after installing the app on existing notes or after changing ``EMBEDDINGS``.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from agent_memory import embeddings
from agent_memory.models import MemoryNote
from agent_memory.stores.orm import DjangoStore

from ..people import person_key

#: Notes sent to the embedding backend at once.
BATCH = 64
BAR_WIDTH = 30


class Command(BaseCommand):
    help = (
        "Compute the vectors that search by meaning uses, for notes that have none or whose text "
        "or embedding model changed (--all: every note again). Shows a progress bar."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--user",
            action="append",
            default=[],
            help="A person's primary key or username (repeat for several; default: everyone).",
        )
        parser.add_argument(
            "--all", action="store_true", help="Re-embed every note, even those up to date."
        )
        parser.add_argument("--database", default=None, help="The database alias to use.")

    def handle(self, *args: Any, **options: Any) -> None:
        embedder = embeddings.get_embedder()
        if embedder is None:
            raise CommandError(
                "Search by meaning is off (AGENT_MEMORY['EMBEDDINGS'] is False, or its backend "
                "cannot be built: see the log). Nothing to embed."
            )
        store = DjangoStore(using=options["database"])
        rows = MemoryNote.objects.using(store.using)
        if options["user"]:
            people = [person_key(value) for value in options["user"]]
            rows = rows.filter(user_id__in=people)
        else:
            people = list(rows.order_by("user_id").values_list("user_id", flat=True).distinct())
        total, done, embedded = rows.count(), 0, 0
        self._bar(done, total)
        for user_id in people:
            notes, stored = store.list_notes_with_vectors(user_id)
            todo = notes if options["all"] else embeddings.stale_notes(embedder, notes, stored)
            done += len(notes) - len(todo)
            self._bar(done, total)
            for start in range(0, len(todo), BATCH):
                batch = todo[start : start + BATCH]
                fresh = embeddings.embed_notes(embedder, batch)
                if fresh is None:
                    self.stdout.write("")
                    raise CommandError(
                        f"The embedding backend {embedder.name} failed (see the log); "
                        f"{embedded} notes were embedded. Nothing is lost: fix the backend and "
                        "run the command again to carry on."
                    )
                store.save_vectors(user_id, fresh)
                embedded += len(fresh)
                done += len(batch)
                self._bar(done, total)
        self.stdout.write("")
        self.stdout.write(
            f"{embedded} notes embedded with {embedder.name}; {total - embedded} were up to date."
        )

    def _bar(self, done: int, total: int) -> None:
        filled = BAR_WIDTH * done // total if total else BAR_WIDTH
        self.stdout.write(
            f"\r[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {done}/{total} notes", ending=""
        )
        self.stdout.flush()
