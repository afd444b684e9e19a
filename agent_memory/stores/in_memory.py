"""``InMemoryStore``: notes in a dict, for tests, demos and single-process tools."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from ..embeddings import StoredVector
from ..errors import NoteNotFound
from ..kinds import MergeRunStatus
from ..notes import MAX_VERSIONS, NewNote, Note, NoteVersion, newest_first, still_valid
from ..rules import text_key
from .base import (
    MergedNote,
    MergePolicy,
    OptimizationRun,
    OptimizerStateRecord,
    at_version,
)
from .merges import MergeStoreBase


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


class InMemoryStore(MergeStoreBase):
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
        self._runs: dict[int, OptimizationRun] = {}
        self._run_ids = itertools.count(1)
        self._snapshots: dict[Any, dict[tuple[int, int], MergedNote]] = {}
        self._states: dict[Any, OptimizerStateRecord] = {}
        self._vectors: dict[int, StoredVector] = {}
        self._fingerprints: dict[Any, str] = {}
        #: Earlier versions by note id, oldest first (at most MAX_VERSIONS each).
        self._versions: dict[int, list[NoteVersion]] = {}

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
        self._versions.pop(note_id, None)

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
            kept = self._versions.setdefault(note_id, [])
            kept.append(NoteVersion.of(current))
            del kept[:-MAX_VERSIONS]
            self._put(user_id, updated)
            return updated

    def history(self, user_id: Any, note_id: int) -> list[NoteVersion]:
        """The note's earlier versions, newest first; ``NoteNotFound`` for a missing, foreign
        or expired note."""
        with self._lock:
            found = self._user_notes(user_id).get(note_id)
            if found is None or found.expired(self._now()):
                raise NoteNotFound.for_id(note_id)
            return self._versions.get(note_id, [])[::-1]

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

    def clear_origin(self, user_id: Any, origin: str) -> int:
        """Forget ``origin`` on the person's notes (the notes stay); return how many changed."""
        with self._lock:
            notes = self._user_notes(user_id)
            changed = [note for note in notes.values() if note.origin == origin]
            notes.update((note.id, replace(note, origin="")) for note in changed)
            return len(changed)

    def memory_enabled(self, user_id: Any) -> bool:
        with self._lock:
            return self._switches.get(user_id, True)

    def set_memory_enabled(self, user_id: Any, on: bool) -> None:
        with self._lock:
            self._switches[user_id] = bool(on)

    def clear_notes(self, user_id: Any) -> int:
        with self._lock:
            self._erase_merges(user_id)
            self._indexes.pop(user_id, None)
            notes = self._notes.pop(user_id, {})
            for note_id in notes:
                self._versions.pop(note_id, None)
            return len(notes)

    # --- what the checked writes of StoreBase hold and read --------------------------------

    def _write_lock(self, user_id: Any) -> AbstractContextManager[object]:
        return self._lock

    def _notes_for_check(self, user_id: Any) -> _PersonIndex:
        return self._index(user_id)

    # --- merges: the storage steps of MergeStoreBase -----------------------------------------

    def _atomic(self) -> AbstractContextManager[object]:
        return self._lock

    def _runs_of(self, user_id: Any, *, running: bool = False) -> list[OptimizationRun]:
        return [
            run
            for _, run in sorted(self._runs.items())
            if run.user_id == user_id and (not running or run.status == MergeRunStatus.RUNNING)
        ]

    def _run_of(self, user_id: Any, run_id: int) -> OptimizationRun | None:
        run = self._runs.get(run_id)
        return run if run is not None and run.user_id == user_id else None

    def _add_run(
        self, user_id: Any, *, model: str, now: datetime, lease_until: datetime
    ) -> OptimizationRun:
        run_id = next(self._run_ids)
        self._runs[run_id] = OptimizationRun(
            run_id, user_id, MergeRunStatus.RUNNING, model, now, lease_until
        )
        return self._runs[run_id]

    def _put_run(self, before: OptimizationRun, after: OptimizationRun) -> None:
        self._runs[after.id] = after

    def _runs_with_text(
        self, user_id: Any, finished_before: datetime | None = None
    ) -> list[OptimizationRun]:
        return [
            run
            for _, run in sorted(self._runs.items())
            if run.proposals != self.policy.erased_proposals
            and (
                run.user_id == user_id
                if finished_before is None
                else run.finished_at is not None and run.finished_at < finished_before
            )
        ]

    def _put_state(
        self, user_id: Any, before: OptimizerStateRecord, after: OptimizerStateRecord
    ) -> None:
        self._states[user_id] = after

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

    def _snapshots_of(
        self, user_id: Any, run_id: int | None = None, merged_ids: Sequence[int] | None = None
    ) -> list[MergedNote]:
        return [
            item
            for _, item in sorted(self._snapshots.get(user_id, {}).items())
            if (run_id is None or item.run_id == run_id)
            and (merged_ids is None or item.merged_note_id in merged_ids)
        ]

    def _add_snapshot(self, user_id: Any, item: MergedNote) -> None:
        self._snapshots.setdefault(user_id, {})[item.run_id, item.group_index] = item

    _put_snapshot = _add_snapshot

    def _drop_snapshots(self, user_id: Any, items: Sequence[MergedNote] | None = None) -> None:
        kept = self._snapshots.pop(user_id, {})
        if items is not None:
            dropped = {(item.run_id, item.group_index) for item in items}
            self._snapshots[user_id] = {k: v for k, v in kept.items() if k not in dropped}

    def _purge_snapshots(self, before: datetime) -> int:
        purged = 0
        for kept in self._snapshots.values():
            for key, item in list(kept.items()):
                if item.created_at < before:
                    del kept[key]
                    purged += 1
        return purged

    def list_optimization_runs(self, user_id: Any, limit: int = 50) -> list[OptimizationRun]:
        with self._lock:
            return self._runs_of(user_id)[::-1][:limit]

    def run_proposals(self, user_id: Any, run_id: int) -> dict[str, Any]:
        """The proposals stored with a run (what ops see in admin for ``DjangoStore``)."""
        with self._lock:
            run = self._run_of(user_id, run_id)
            return dict(run.proposals) if run else {}

    # --- per-person optimizer state ------------------------------------------------------------

    def record_optimizer_activity(
        self, user_id: Any, *, at: datetime, model: str, options: dict[str, Any] | None = None
    ) -> OptimizerStateRecord:
        with self._lock:
            state = replace(
                self._states.get(user_id, OptimizerStateRecord()),
                last_activity_at=at,
                model=model,
                options=dict(options or {}),
            )
            self._states[user_id] = state
            return state

    def get_optimizer_state(self, user_id: Any) -> OptimizerStateRecord:
        with self._lock:
            return self._states.get(user_id, OptimizerStateRecord())

    def due_optimizer_users(self, now: datetime) -> list[tuple[Any, str]]:
        with self._lock:
            due = [
                (user_id, state.model or "default")
                for user_id, state in self._states.items()
                if self.policy.wants_run(state, now)
            ]
        # A person who turned memory off is left alone until they turn it on again.
        return [(user_id, model) for user_id, model in due if self.memory_enabled(user_id)]

    # --- vectors for meaning-based search, and the optimizer's fingerprint -----------------

    def list_notes_with_vectors(
        self, user_id: Any, *, vectors: bool = True
    ) -> tuple[list[Note], dict[int, StoredVector]]:
        with self._lock:
            notes = self.list_notes(user_id)
            if not vectors:
                return notes, {}
            kept = self._vectors
            return notes, {note.id: kept[note.id] for note in notes if note.id in kept}

    def vectors_of(self, user_id: Any, note_ids: Sequence[int]) -> dict[int, StoredVector]:
        with self._lock:
            mine = self._user_notes(user_id)
            kept = self._vectors
            return {key: kept[key] for key in note_ids if key in mine and key in kept}

    def save_vectors(self, user_id: Any, vectors: dict[int, StoredVector]) -> None:
        with self._lock:
            mine = self._user_notes(user_id)
            self._vectors.update({key: item for key, item in vectors.items() if key in mine})

    def get_notes_fingerprint(self, user_id: Any) -> str:
        with self._lock:
            return self._fingerprints.get(user_id, "")

    def set_notes_fingerprint(self, user_id: Any, fingerprint: str) -> None:
        with self._lock:
            self._fingerprints[user_id] = fingerprint
