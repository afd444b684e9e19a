"""``InMemoryStore``: notes in a dict, for tests, demos and single-process tools."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from ..notes import NewNote, Note, newest_first, still_valid
from ..rules import text_key
from .base import BaseStore
from .policy import MergePolicy
from .values import at_version


class _PersonIndex:
    """One person's counts and their note ids by folded text: a :class:`~agent_memory.rules.NoteSet`
    over their notes that never walks all of them."""

    def __init__(self, notes: dict[int, Note]) -> None:
        self._notes = notes
        self.note_count = 0
        self.total_chars = 0
        self._by_text: dict[str, set[int]] = {}

    def add(self, note: Note) -> None:
        self.note_count += 1
        self.total_chars += len(note.content)
        self._by_text.setdefault(text_key(note.content), set()).add(note.id)

    def remove(self, note: Note) -> None:
        self.note_count -= 1
        self.total_chars -= len(note.content)
        key = text_key(note.content)
        ids = self._by_text.get(key, set())
        ids.discard(note.id)
        if not ids:
            self._by_text.pop(key, None)

    def with_texts(self, contents: Sequence[str]) -> list[Note]:
        ids = set().union(*(self._by_text.get(text_key(text), set()) for text in contents))
        return [self._notes[note_id] for note_id in sorted(ids)]


class InMemoryStore(BaseStore):
    """Keeps notes in this process only; everything is lost when it exits.

    Its checked writes hold a lock of this object, which is the whole store, so limits hold for
    every thread using it. Each person's counts and an index of their notes by text are kept
    beside the notes, so the checks never walk every note.
    """

    def __init__(self, *, policy: MergePolicy | None = None) -> None:
        super().__init__(policy=policy)
        self._lock = threading.RLock()
        self._notes: dict[Any, dict[int, Note]] = {}
        self._indexes: dict[Any, _PersonIndex] = {}
        self._ids = itertools.count(1)

    def _user_notes(self, user_id: Any) -> dict[int, Note]:
        return self._notes.setdefault(user_id, {})

    def _index(self, user_id: Any) -> _PersonIndex:
        index = self._indexes.get(user_id)
        if index is None:
            index = self._indexes[user_id] = _PersonIndex(self._user_notes(user_id))
        return index

    def _put(self, user_id: Any, note: Note) -> None:
        """Store ``note`` (new, or replacing the note with its id) and keep the index true."""
        notes, index = self._user_notes(user_id), self._index(user_id)
        old = notes.get(note.id)
        if old is not None:
            index.remove(old)
        notes[note.id] = note
        index.add(note)

    def _drop(self, user_id: Any, note_id: int) -> None:
        self._index(user_id).remove(self._user_notes(user_id).pop(note_id))
        self._drop_versions([note_id])

    @staticmethod
    def _now() -> datetime:
        return datetime.now(UTC)

    def list_notes(self, user_id: Any) -> list[Note]:
        with self._lock:
            return newest_first(still_valid(list(self._user_notes(user_id).values()), self._now()))

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
                    created_at=note.created_at or now,
                    updated_at=now,
                    origin=note.origin,
                    pinned=bool(note.pinned),
                    created_by=note.source,
                    valid_until=note.valid_until,
                )
                for note in notes
            ]
            for note in created:
                self._put(user_id, note)
            return created

    def _current(self, user_id: Any, note_id: int, version: int) -> Note:
        found = self._user_notes(user_id).get(note_id)
        if found is not None and found.expired(self._now()):
            found = None
        return at_version(found, note_id, version)

    def update_note(self, user_id: Any, note_id: int, version: int, note: NewNote) -> Note:
        with self._lock:
            current = self._current(user_id, note_id, version)
            updated = current.updated_to(note, max(self._now(), current.updated_at))
            self._keep_version(current)
            self._put(user_id, updated)
            return updated

    def purge_expired(self, now: datetime, user_id: Any = None) -> dict[Any, list[int]]:
        """Delete the notes whose ``valid_until`` passed by ``now`` (of everyone, or of the
        person ``user_id``) like any delete; returns the ids deleted per person."""
        purged: dict[Any, list[int]] = {}
        with self._lock:
            people = list(self._notes) if user_id is None else [user_id]
            for person in people:
                gone = [note for note in self._user_notes(person).values() if note.expired(now)]
                for note in gone:
                    self._drop(person, note.id)
                if gone:
                    self._forget(person, {note.id: note.content for note in gone})
                    purged[person] = [note.id for note in gone]
        return purged

    def delete_note(self, user_id: Any, note_id: int, version: int) -> None:
        with self._lock:
            current = self._current(user_id, note_id, version)
            self._drop(user_id, note_id)
            self._forget(user_id, {note_id: current.content})

    def clear_notes(self, user_id: Any) -> int:
        with self._lock:
            self._erase_merges(user_id)
            self._indexes.pop(user_id, None)
            notes = self._notes.pop(user_id, {})
            self._drop_versions(list(notes))
            return len(notes)

    def clear_origin(self, user_id: Any, origin: str) -> int:
        """Forget ``origin`` on the person's notes (the notes stay, at their versions); return
        how many changed."""
        with self._lock:
            notes = self._user_notes(user_id)
            changed = [note for note in notes.values() if note.origin == origin]
            notes.update((note.id, replace(note, origin="")) for note in changed)
            return len(changed)

    # --- what the checked writes of BaseStore hold and read --------------------------------

    def _write_lock(self, user_id: Any) -> AbstractContextManager[object]:
        return self._lock

    def _notes_for_check(self, user_id: Any) -> _PersonIndex:
        return self._index(user_id)

    # --- merges: the two note steps ------------------------------------------------------

    can_merge = True

    def _atomic(self) -> AbstractContextManager[object]:
        return self._lock

    def _merge_notes(
        self, user_id: Any, sources: Sequence[Note], note: NewNote, now: datetime
    ) -> Note:
        for source in sources:
            self._drop(user_id, source.id)
        merged = Note(
            *(next(self._ids), user_id, note.categories, note.content, 1, note.source, now, now),
            created_by=note.source,
            valid_until=note.valid_until,
        )
        self._put(user_id, merged)
        return merged

    def _unmerge_notes(
        self, user_id: Any, merged: Sequence[Note], originals: Sequence[Note], now: datetime
    ) -> list[Note]:
        for note in merged:
            self._drop(user_id, note.id)
        restored = [replace(note, version=note.version + 1, updated_at=now) for note in originals]
        for note in restored:
            self._put(user_id, note)
        return restored
