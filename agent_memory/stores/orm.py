"""``DjangoStore``: notes in the app's tables through Django's ORM (SQLite, PostgreSQL, …)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import router, transaction
from django.db.models import F
from django.utils import timezone

from ..errors import NoteNotFound, StaleVersion
from ..locking import user_write_lock
from ..models import MemoryNote
from ..notes import NewNote, Note
from .base import CreateCheck, UpdateCheck


def to_note(row: MemoryNote) -> Note:
    return Note(
        id=row.pk,
        user_id=row.user_id,
        categories=tuple(row.categories),
        content=row.content,
        version=row.version,
        source=row.source,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


class DjangoStore:
    """The default store: the ``MemoryNote`` table, with the per-user lock of SPEC §9.

    ``using`` picks a database alias; by default the router's choice for writes, so reads of a
    person's notes for a write never go to a lagging replica.
    """

    def __init__(self, using: str | None = None) -> None:
        self._using = using

    @property
    def using(self) -> str:
        return self._using or router.db_for_write(MemoryNote) or "default"

    def _rows(self, user_id: Any) -> Any:
        return MemoryNote.objects.using(self.using).filter(user_id=user_id)

    # --- the five note methods -----------------------------------------------------------

    def list_notes(self, user_id: Any) -> list[Note]:
        return [to_note(row) for row in self._rows(user_id).order_by("-updated_at", "-id")]

    def insert_notes(self, user_id: Any, notes: Sequence[NewNote]) -> list[Note]:
        now = timezone.now()
        created: list[Note] = []
        with transaction.atomic(using=self.using):
            for note in notes:
                row = MemoryNote(
                    user_id=user_id,
                    categories=list(note.categories),
                    content=note.content,
                    source=note.source,
                    version=1,
                    created_at=now,
                    updated_at=now,
                )
                # One save per row: bulk_create does not return ids on every backend.
                row.save(using=self.using, force_insert=True)
                created.append(to_note(row))
        return created

    def update_note(self, user_id: Any, note_id: int, version: int, note: NewNote) -> Note:
        with transaction.atomic(using=self.using):
            changed = (
                self._rows(user_id)
                .filter(pk=note_id, version=version)
                .update(
                    categories=list(note.categories),
                    content=note.content,
                    source=note.source,
                    version=F("version") + 1,
                    updated_at=timezone.now(),
                )
            )
            if not changed:
                self._raise_missing_or_stale(user_id, note_id, version)
            return to_note(self._rows(user_id).get(pk=note_id))

    def delete_note(self, user_id: Any, note_id: int, version: int) -> None:
        with transaction.atomic(using=self.using):
            deleted, _ = self._rows(user_id).filter(pk=note_id, version=version).delete()
            if not deleted:
                self._raise_missing_or_stale(user_id, note_id, version)

    def clear_notes(self, user_id: Any) -> int:
        with transaction.atomic(using=self.using):
            deleted, _ = self._rows(user_id).delete()
        return deleted

    def _raise_missing_or_stale(self, user_id: Any, note_id: int, version: int) -> None:
        current = self._rows(user_id).filter(pk=note_id).values_list("version", flat=True).first()
        if current is None:
            raise NoteNotFound.for_id(note_id)
        raise StaleVersion.for_note(note_id, version, current)

    # --- checked writes: limits that hold across processes -------------------------------

    def insert_notes_checked(
        self, user_id: Any, notes: Sequence[NewNote], check: CreateCheck
    ) -> list[Note]:
        with user_write_lock(user_id, self.using):
            check(self.list_notes(user_id))
            return self.insert_notes(user_id, notes)

    def update_note_checked(
        self, user_id: Any, note_id: int, version: int, note: NewNote, check: UpdateCheck
    ) -> Note:
        with user_write_lock(user_id, self.using):
            existing = self.list_notes(user_id)
            current = next((item for item in existing if item.id == note_id), None)
            if current is None:
                raise NoteNotFound.for_id(note_id)
            if current.version != version:
                raise StaleVersion.for_note(note_id, version, current.version)
            check(existing, current)
            return self.update_note(user_id, note_id, version, note)
