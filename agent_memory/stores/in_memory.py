"""``InMemoryStore``: notes in a dict, for tests, demos and single-process tools."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from ..embeddings import StoredVector
from ..errors import LeaseExpired, NoteNotFound
from ..notes import NewNote, Note, newest_first
from ..rules import text_key
from .base import (
    ApplyCheck,
    CreateCheck,
    MergedNote,
    MergePlan,
    MergePolicy,
    OptimizationRun,
    OptimizerStateRecord,
    RevertCheck,
    RunOutcome,
    RunStatus,
    StoreBase,
    UpdateCheck,
    at_version,
    unchanged_since_merge,
)


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


class InMemoryStore(StoreBase):
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
        self._snapshots: list[MergedNote] = []
        self._states: dict[Any, OptimizerStateRecord] = {}
        self._vectors: dict[int, StoredVector] = {}
        self._fingerprints: dict[Any, str] = {}

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
                    origin=note.origin,
                )
                for note in notes
            ]
            for note in created:
                self._put(user_id, note)
            return created

    def _current(self, user_id: Any, note_id: int, version: int) -> Note:
        return at_version(self._user_notes(user_id).get(note_id), note_id, version)

    def update_note(self, user_id: Any, note_id: int, version: int, note: NewNote) -> Note:
        with self._lock:
            current = self._current(user_id, note_id, version)
            updated = current.updated_to(note, max(self._now(), current.updated_at))
            self._put(user_id, updated)
            return updated

    def delete_note(self, user_id: Any, note_id: int, version: int) -> None:
        with self._lock:
            current = self._current(user_id, note_id, version)
            self._drop(user_id, note_id)
            self._forget(user_id, {note_id: current.content})

    def _forget(self, user_id: Any, deleted: dict[int, str]) -> None:
        """Remove the text of the ``deleted`` notes (id → text) from every copy kept here; a
        snapshot whose merged note is deleted keeps only its originals' ids (reverting it still
        answers "conflict"), and their text is forgotten too."""
        deleted = dict(deleted)
        policy = self.policy
        kept = []
        for item in self._snapshots:
            mine = self._user_run(user_id, item.run_id) is not None
            if mine and item.merged_note_id in deleted and not item.forgotten:
                deleted.update((note.id, note.content) for note in item.sources)
                item = policy.forget_sources(item)
            kept.append(item)
        self._snapshots = kept
        for run in self._person_runs(user_id):
            self._runs[run.id] = policy.forget(run, deleted)

    def clear_origin(self, user_id: Any, origin: str) -> int:
        """Forget ``origin`` on the person's notes (the notes stay); return how many changed."""
        with self._lock:
            notes = self._user_notes(user_id)
            changed = [note for note in notes.values() if note.origin == origin]
            notes.update((note.id, replace(note, origin="")) for note in changed)
            return len(changed)

    def clear_notes(self, user_id: Any) -> int:
        with self._lock:
            self._snapshots = [
                item for item in self._snapshots if self._user_run(user_id, item.run_id) is None
            ]
            for run in self._person_runs(user_id):
                self._runs[run.id] = self.policy.erased(run)
            self._indexes.pop(user_id, None)
            return len(self._notes.pop(user_id, {}))

    def insert_notes_checked(
        self, user_id: Any, notes: Sequence[NewNote], check: CreateCheck
    ) -> list[Note]:
        with self._lock:
            check(self._index(user_id))
            return self.insert_notes(user_id, notes)

    def update_note_checked(
        self, user_id: Any, note_id: int, version: int, note: NewNote, check: UpdateCheck
    ) -> Note:
        with self._lock:
            current = self._current(user_id, note_id, version)
            check(self._index(user_id), current)
            return self.update_note(user_id, note_id, version, note)

    # --- merges: runs, leases, backoff, snapshots ------------------------------------------------

    def _user_run(self, user_id: Any, run_id: int) -> OptimizationRun | None:
        run = self._runs.get(run_id)
        return run if run is not None and run.user_id == user_id else None

    def _person_runs(self, user_id: Any) -> list[OptimizationRun]:
        """The person's runs, oldest first."""
        return [run for _, run in sorted(self._runs.items()) if run.user_id == user_id]

    def _count_outcome(
        self, user_id: Any, now: datetime, succeeded: bool, interval: timedelta | None = None
    ) -> None:
        state = self._states.get(user_id, OptimizerStateRecord())
        self._states[user_id] = self.policy.after_outcome(
            state, now=now, succeeded=succeeded, interval=interval
        )

    def _close_expired(self, run: OptimizationRun, now: datetime) -> None:
        self._runs[run.id] = self.policy.lease_expired(run, now)
        self._count_outcome(run.user_id, now, succeeded=False)

    def claim_optimization_run(
        self,
        user_id: Any,
        *,
        model: str,
        now: datetime,
        lease_until: datetime,
        force: bool = False,
    ) -> OptimizationRun | None:
        with self._lock:
            policy = self.policy
            for run in self._person_runs(user_id):
                if run.status == RunStatus.RUNNING:
                    if policy.holds_lease(run, now):
                        return None
                    self._close_expired(run, now)
            state = self._states.get(user_id, OptimizerStateRecord())
            if not force and not policy.is_due(state, now):
                return None
            run = OptimizationRun(
                id=next(self._run_ids),
                user_id=user_id,
                status=RunStatus.RUNNING,
                model=model,
                started_at=now,
                lease_expires_at=lease_until,
            )
            self._runs[run.id] = run
            return run

    def finish_optimization_run(
        self,
        user_id: Any,
        run_id: int,
        outcome: RunOutcome,
        *,
        now: datetime,
        interval: timedelta,
    ) -> bool:
        with self._lock:
            run = self._user_run(user_id, run_id)
            if run is None or run.status != RunStatus.RUNNING:
                return False
            if not self.policy.holds_lease(run, now):
                self._close_expired(run, now)
                return False
            live = set(self._user_notes(user_id))
            self._runs[run_id] = self.policy.finished(run, outcome, now=now, live_ids=live)
            self._count_outcome(user_id, now, outcome.succeeded, interval)
            return True

    def apply_merge(
        self,
        user_id: Any,
        run_id: int,
        plan: MergePlan,
        *,
        now: datetime,
        check: ApplyCheck | None = None,
    ) -> Note:
        with self._lock:
            run = self._user_run(user_id, run_id)
            if run is None or not self.policy.holds_lease(run, now):
                raise LeaseExpired.for_run(run_id)
            sources = [
                self._current(user_id, note_id, version)
                for note_id, version in plan.sources.items()
            ]
            if check is not None:
                others = [note for note in self.list_notes(user_id) if note.id not in plan.sources]
                check(others, sources)
            for note in sources:
                self._drop(user_id, note.id)
            self._forget(user_id, {note.id: note.content for note in sources})
            merged = Note(
                id=next(self._ids),
                user_id=user_id,
                categories=tuple(plan.note.categories),
                content=plan.note.content,
                version=1,
                source="merge",
                created_at=now,
                updated_at=now,
            )
            self._put(user_id, merged)
            self._snapshots.append(
                MergedNote(run_id, plan.group_index, merged.id, 1, tuple(sources), now)
            )
            self._runs[run_id] = self.policy.applied(self._runs[run_id], plan, merged.id, sources)
            return merged

    def revert_merge(
        self, user_id: Any, run_id: int, *, now: datetime, group: int | None = None
    ) -> list[Note]:
        return self.revert_merge_checked(user_id, run_id, None, now=now, group=group)

    def revert_merge_checked(
        self,
        user_id: Any,
        run_id: int,
        check: RevertCheck | None,
        *,
        now: datetime,
        group: int | None = None,
    ) -> list[Note]:
        with self._lock:
            run = self._user_run(user_id, run_id)
            chosen = sorted(
                (
                    item
                    for item in self._snapshots
                    if run is not None
                    and item.run_id == run_id
                    and (group is None or item.group_index == group)
                ),
                key=lambda item: item.group_index,
            )
            if run is None or not chosen:
                raise NoteNotFound.for_merge(run_id, group)
            notes = self._user_notes(user_id)
            unchanged_since_merge(chosen, notes)
            merged_ids = {item.merged_note_id for item in chosen}
            originals = [note for item in chosen for note in item.sources]
            if check is not None:
                remaining = [note for note in self.list_notes(user_id) if note.id not in merged_ids]
                check(remaining, originals)
            for note_id in merged_ids:
                self._drop(user_id, note_id)
            restored = [
                replace(note, version=note.version + 1, updated_at=now) for note in originals
            ]
            for note in restored:
                self._put(user_id, note)
            self._snapshots = [item for item in self._snapshots if item not in chosen]
            self._runs[run_id] = self.policy.reverted(run, chosen, now)
            return restored

    def kept_apart(self, user_id: Any) -> list[tuple[int, ...]]:
        """The sets of note ids the person reverted: never to be merged again."""
        with self._lock:
            return self.policy.kept_apart(self._person_runs(user_id))

    def list_optimization_runs(self, user_id: Any, limit: int = 50) -> list[OptimizationRun]:
        with self._lock:
            return self._person_runs(user_id)[::-1][:limit]

    def list_merged_notes(self, user_id: Any) -> list[MergedNote]:
        with self._lock:
            mine = [
                item for item in self._snapshots if self._user_run(user_id, item.run_id) is not None
            ]
            return sorted(mine, key=lambda item: (-item.run_id, item.group_index))

    def purge_merge_snapshots(self, before: datetime) -> int:
        with self._lock:
            kept = [item for item in self._snapshots if item.created_at >= before]
            purged = len(self._snapshots) - len(kept)
            self._snapshots = kept
            for run in list(self._runs.values()):
                if run.finished_at is not None and run.finished_at < before:
                    self._runs[run.id] = self.policy.erased(run)
            return purged

    def run_proposals(self, user_id: Any, run_id: int) -> dict[str, Any]:
        """The proposals stored with a run (what ops see in admin for ``DjangoStore``)."""
        with self._lock:
            run = self._user_run(user_id, run_id)
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
            return [
                (user_id, state.model or "default")
                for user_id, state in self._states.items()
                if self.policy.wants_run(state, now)
            ]

    # --- vectors for meaning-based search, and the optimizer's fingerprint -----------------

    def list_notes_with_vectors(self, user_id: Any) -> tuple[list[Note], dict[int, StoredVector]]:
        with self._lock:
            notes = self.list_notes(user_id)
            kept = self._vectors
            return notes, {note.id: kept[note.id] for note in notes if note.id in kept}

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
