"""A store that writes only the five note methods, over a dict: what the base's defaults are
measured on (the store contract, checked writes, history, switch, vectors)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from agent_memory.notes import NewNote, Note, newest_first, still_valid
from agent_memory.stores.base import BaseStore, at_version


class FiveMethodStore(BaseStore):
    def __init__(self) -> None:
        super().__init__()
        self._notes: dict[Any, dict[int, Note]] = {}
        self._ids = itertools.count(1)

    def _mine(self, user_id: Any) -> dict[int, Note]:
        return self._notes.setdefault(user_id, {})

    def _at(self, user_id: Any, note_id: int, version: int) -> Note:
        live = {note.id: note for note in self.list_notes(user_id)}
        return at_version(live.get(note_id), note_id, version)

    def list_notes(self, user_id: Any) -> list[Note]:
        return newest_first(still_valid(list(self._mine(user_id).values()), datetime.now(UTC)))

    def insert_notes(self, user_id: Any, notes: Sequence[NewNote]) -> list[Note]:
        now = datetime.now(UTC)
        created = [
            Note(
                *(next(self._ids), user_id, tuple(note.categories), note.content, 1, note.source),
                *(note.created_at or now, now, note.origin),
                created_by=note.source,
                pinned=bool(note.pinned),
                valid_until=note.valid_until,
            )
            for note in notes
        ]
        self._mine(user_id).update((note.id, note) for note in created)
        return created

    def update_note(self, user_id: Any, note_id: int, version: int, note: NewNote) -> Note:
        current = self._at(user_id, note_id, version)
        updated = current.updated_to(note, max(datetime.now(UTC), current.updated_at))
        self._mine(user_id)[note_id] = updated
        return updated

    def delete_note(self, user_id: Any, note_id: int, version: int) -> None:
        self._at(user_id, note_id, version)
        del self._mine(user_id)[note_id]

    def clear_notes(self, user_id: Any) -> int:
        return len(self._notes.pop(user_id, {}))
