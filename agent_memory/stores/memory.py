"""``InMemoryStore``: notes in a dict, for tests, demos and single-process tools."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from ..errors import NoteNotFound, StaleVersion
from ..notes import NewNote, Note, newest_first
from .base import CreateCheck, UpdateCheck


class InMemoryStore:
    """Keeps notes in this process only; everything is lost when it exits.

    Its checked writes hold a lock of this object, which is the whole store, so limits hold for
    every thread using it.
    """

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._notes: dict[Any, dict[int, Note]] = {}
        self._ids = itertools.count(1)

    def _user_notes(self, user_id: Any) -> dict[int, Note]:
        return self._notes.setdefault(user_id, {})

    @staticmethod
    def _now() -> datetime:
        return datetime.now(UTC)

    def list_notes(self, user_id: Any) -> list[Note]:
        with self._lock:
            return newest_first(list(self._user_notes(user_id).values()))

    def insert_notes(self, user_id: Any, notes: Sequence[NewNote]) -> list[Note]:
        with self._lock:
            now = self._now()
            created = [
                Note(
                    id=next(self._ids),
                    user_id=user_id,
                    categories=tuple(note.categories),
                    content=note.content,
                    version=1,
                    source=note.source,
                    created_at=now,
                    updated_at=now,
                )
                for note in notes
            ]
            self._user_notes(user_id).update((note.id, note) for note in created)
            return created

    def _current(self, user_id: Any, note_id: int, version: int) -> Note:
        current = self._user_notes(user_id).get(note_id)
        if current is None:
            raise NoteNotFound.for_id(note_id)
        if current.version != version:
            raise StaleVersion.for_note(note_id, version, current.version)
        return current

    def update_note(self, user_id: Any, note_id: int, version: int, note: NewNote) -> Note:
        with self._lock:
            current = self._current(user_id, note_id, version)
            updated = replace(
                current,
                categories=tuple(note.categories),
                content=note.content,
                source=note.source,
                version=current.version + 1,
                updated_at=max(self._now(), current.updated_at),
            )
            self._user_notes(user_id)[note_id] = updated
            return updated

    def delete_note(self, user_id: Any, note_id: int, version: int) -> None:
        with self._lock:
            self._current(user_id, note_id, version)
            del self._user_notes(user_id)[note_id]

    def clear_notes(self, user_id: Any) -> int:
        with self._lock:
            return len(self._notes.pop(user_id, {}))

    def insert_notes_checked(
        self, user_id: Any, notes: Sequence[NewNote], check: CreateCheck
    ) -> list[Note]:
        with self._lock:
            check(self.list_notes(user_id))
            return self.insert_notes(user_id, notes)

    def update_note_checked(
        self, user_id: Any, note_id: int, version: int, note: NewNote, check: UpdateCheck
    ) -> Note:
        with self._lock:
            current = self._current(user_id, note_id, version)
            check(self.list_notes(user_id), current)
            return self.update_note(user_id, note_id, version, note)
