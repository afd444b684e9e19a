"""``InMemoryStore``: notes in a dict, for tests, demos and single-process tools."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from ..embeddings import StoredVector
from ..errors import MergeConflict, NoteNotFound, StaleVersion
from ..kinds import MergeRunStatus, NoteSource
from ..notes import NewNote, Note, newest_first
from ..optimizer.records import (
    ERASED_PROPOSALS,
    ApplyCheck,
    LeaseExpired,
    MergedNote,
    MergePlan,
    OptimizationRun,
    OptimizerStateRecord,
    RevertCheck,
    RunOutcome,
    backoff_delay,
    deleted_marker,
    erased_rejections,
    forget_deleted_meanwhile,
    forget_in_run,
    kept_apart_groups,
    no_merge_message,
    reverted_group,
)
from ..rules import text_key
from .base import CreateCheck, UpdateCheck


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


class InMemoryStore:
    """Keeps notes in this process only; everything is lost when it exits.

    Its checked writes hold a lock of this object, which is the whole store, so limits hold for
    every thread using it. Each person's counts and an index of their notes by text are kept
    beside the notes, so the checks never walk every note.
    """

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._notes: dict[Any, dict[int, Note]] = {}
        self._indexes: dict[Any, _PersonIndex] = {}
        self._ids = itertools.count(1)
        self._runs: dict[int, dict[str, Any]] = {}
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
        current = self._user_notes(user_id).get(note_id)
        if current is None:
            raise NoteNotFound.for_id(note_id)
        if current.version != version:
            raise StaleVersion.for_note(note_id, version, current.version)
        return current

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
        kept = []
        for item in self._snapshots:
            mine = self._user_run(user_id, item.run_id) is not None
            if mine and item.merged_note_id in deleted:
                for original in item.sources:
                    deleted.setdefault(original.id, original.content)
                sources = tuple(
                    replace(note, categories=(), content=deleted_marker(note.id))
                    for note in item.sources
                )
                item = replace(item, sources=sources)
            kept.append(item)
        self._snapshots = kept
        for data in self._runs.values():
            if data["user_id"] == user_id:
                data["proposals"], data["rejected"] = forget_in_run(
                    data["proposals"], data["rejected"], deleted
                )

    def clear_origin(self, user_id: Any, origin: str) -> int:
        """Forget ``origin`` on the person's notes (the notes stay); return how many changed."""
        with self._lock:
            notes = self._user_notes(user_id)
            changed = [note for note in notes.values() if note.origin == origin]
            notes.update((note.id, replace(note, origin="")) for note in changed)
            return len(changed)

    def clear_notes(self, user_id: Any) -> int:
        with self._lock:
            self._erase_merge_texts(user_id)
            self._indexes.pop(user_id, None)
            return len(self._notes.pop(user_id, {}))

    def insert_notes_checked(
        self,
        user_id: Any,
        notes: Sequence[NewNote],
        check: CreateCheck,
        *,
        vectors: Sequence[StoredVector] | None = None,
    ) -> list[Note]:
        if vectors is not None and len(vectors) != len(notes):
            raise ValueError(f"{len(vectors)} vectors for {len(notes)} notes.")
        with self._lock:
            check(self._index(user_id))
            created = self.insert_notes(user_id, notes)
            if vectors:
                self._vectors.update(zip((note.id for note in created), vectors, strict=True))
            return created

    def update_note_checked(
        self,
        user_id: Any,
        note_id: int,
        version: int,
        note: NewNote,
        check: UpdateCheck,
        *,
        vector: StoredVector | None = None,
    ) -> Note:
        with self._lock:
            current = self._current(user_id, note_id, version)
            check(self._index(user_id), current)
            updated = self.update_note(user_id, note_id, version, note)
            if vector is not None:
                self._vectors[note_id] = vector
            return updated

    # --- merges: runs, leases, backoff, snapshots ----------------------------------------------

    def _run_record(self, run_id: int) -> OptimizationRun:
        data = self._runs[run_id]
        fields = {key: value for key, value in data.items() if key != "proposals"}
        return OptimizationRun(
            **{
                **fields,
                "applied": list(data["applied"]),
                "rejected": list(data["rejected"]),
                "reverted": list(data["reverted"]),
            }
        )

    def _user_run(self, user_id: Any, run_id: int) -> dict[str, Any] | None:
        data = self._runs.get(run_id)
        return data if data is not None and data["user_id"] == user_id else None

    def _count_outcome(
        self, user_id: Any, now: datetime, succeeded: bool, interval: timedelta | None = None
    ) -> None:
        state = self._states.get(user_id, OptimizerStateRecord())
        if succeeded:
            state = replace(
                state,
                consecutive_failures=0,
                last_success_at=now,
                next_run_at=now + (interval or timedelta(hours=24)),
            )
        else:
            failures = state.consecutive_failures + 1
            state = replace(
                state, consecutive_failures=failures, next_run_at=now + backoff_delay(failures)
            )
        self._states[user_id] = state

    def _expire_run(self, data: dict[str, Any], now: datetime) -> None:
        data.update(
            status=MergeRunStatus.FAILED,
            finished_at=now,
            error="The run's lease expired before it finished; its late result was discarded.",
        )
        self._count_outcome(data["user_id"], now, succeeded=False)

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
            live = [
                data
                for data in self._runs.values()
                if data["user_id"] == user_id and data["status"] == MergeRunStatus.RUNNING
            ]
            for data in live:
                if data["lease_expires_at"] <= now:
                    self._expire_run(data, now)
            if any(data["status"] == MergeRunStatus.RUNNING for data in live):
                return None
            state = self._states.get(user_id)
            if not force and state and state.next_run_at and state.next_run_at > now:
                return None
            run_id = next(self._run_ids)
            self._runs[run_id] = {
                "id": run_id,
                "user_id": user_id,
                "status": MergeRunStatus.RUNNING,
                "model": model,
                "started_at": now,
                "lease_expires_at": lease_until,
                "finished_at": None,
                "reverted_at": None,
                "applied": [],
                "rejected": [],
                "error": "",
                "proposals": {},
                "reverted": [],
            }
            return self._run_record(run_id)

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
            data = self._user_run(user_id, run_id)
            if data is None or data["status"] != MergeRunStatus.RUNNING:
                return False
            if data["lease_expires_at"] <= now:
                self._expire_run(data, now)
                return False
            erased = data["proposals"] == ERASED_PROPOSALS
            if erased:
                proposals, rejected = data["proposals"], erased_rejections(outcome.rejected)
            else:
                proposals, rejected = forget_deleted_meanwhile(
                    outcome, set(self._user_notes(user_id)), data["applied"]
                )
            data.update(
                status=MergeRunStatus.SUCCEEDED if outcome.succeeded else MergeRunStatus.FAILED,
                finished_at=now,
                proposals=proposals,
                rejected=rejected,
                error=outcome.error,
            )
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
            data = self._user_run(user_id, run_id)
            if (
                data is None
                or data["status"] != MergeRunStatus.RUNNING
                or data["lease_expires_at"] <= now
            ):
                raise LeaseExpired(f"Optimization run {run_id} no longer holds its lease.")
            sources = [
                self._current(user_id, note_id, version)
                for note_id, version in plan.sources.items()
            ]
            existing = self.list_notes(user_id)
            if check is not None:
                check([note for note in existing if note.id not in plan.sources], sources)
            for note in sources:
                self._drop(user_id, note.id)
            self._forget(user_id, {note.id: note.content for note in sources})
            merged = Note(
                id=next(self._ids),
                user_id=user_id,
                categories=tuple(plan.note.categories),
                content=plan.note.content,
                version=1,
                source=NoteSource.MERGE,
                created_at=now,
                updated_at=now,
            )
            self._put(user_id, merged)
            self._snapshots.append(
                MergedNote(
                    run_id=run_id,
                    group_index=plan.group_index,
                    merged_note_id=merged.id,
                    merged_version=merged.version,
                    sources=tuple(sources),
                    created_at=now,
                )
            )
            data["applied"] = [
                *data["applied"],
                {
                    "index": plan.group_index,
                    "merged_id": merged.id,
                    "source_ids": [note.id for note in sources],
                },
            ]
            return merged

    def _run_snapshots(self, user_id: Any, run_id: int) -> list[MergedNote]:
        if self._user_run(user_id, run_id) is None:
            return []
        return sorted(
            (item for item in self._snapshots if item.run_id == run_id),
            key=lambda item: item.group_index,
        )

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
            snapshots = [
                item
                for item in self._run_snapshots(user_id, run_id)
                if group is None or item.group_index == group
            ]
            if not snapshots:
                raise NoteNotFound(no_merge_message(run_id, group))
            notes = self._user_notes(user_id)
            for snapshot in snapshots:
                current = notes.get(snapshot.merged_note_id)
                if current is None or current.version != snapshot.merged_version:
                    raise MergeConflict(
                        f"memory:{snapshot.merged_note_id} was changed or deleted after the "
                        "merge, so reverting would lose that change. Edit the notes by hand "
                        "instead."
                    )
            merged_ids = {snapshot.merged_note_id for snapshot in snapshots}
            originals = [note for snapshot in snapshots for note in snapshot.sources]
            if check is not None:
                check(
                    [note for note in self.list_notes(user_id) if note.id not in merged_ids],
                    originals,
                )
            for note_id in merged_ids:
                self._drop(user_id, note_id)
            restored = [
                replace(note, version=note.version + 1, updated_at=now) for note in originals
            ]
            for note in restored:
                self._put(user_id, note)
            self._snapshots = [item for item in self._snapshots if item not in snapshots]
            data = self._runs[run_id]
            data["reverted_at"] = now
            data["reverted"] = [
                *data["reverted"],
                *(
                    reverted_group(item.group_index, item.merged_note_id, item.sources)
                    for item in snapshots
                ),
            ]
            return restored

    def kept_apart(self, user_id: Any) -> list[tuple[int, ...]]:
        """The sets of note ids the person reverted: never to be merged again."""
        with self._lock:
            runs = sorted(
                (data for data in self._runs.values() if data["user_id"] == user_id),
                key=lambda data: data["id"],
            )
            return kept_apart_groups([self._run_record(data["id"]) for data in runs])

    def list_optimization_runs(self, user_id: Any, limit: int = 50) -> list[OptimizationRun]:
        with self._lock:
            ids = sorted(
                (run_id for run_id, data in self._runs.items() if data["user_id"] == user_id),
                reverse=True,
            )
            return [self._run_record(run_id) for run_id in ids[:limit]]

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
            for data in self._runs.values():
                if data["finished_at"] is not None and data["finished_at"] < before:
                    data["proposals"] = dict(ERASED_PROPOSALS)
                    data["rejected"] = erased_rejections(data["rejected"])
            return purged

    def run_proposals(self, user_id: Any, run_id: int) -> dict[str, Any]:
        """The proposals stored with a run (what ops see in admin for ``DjangoStore``)."""
        with self._lock:
            data = self._user_run(user_id, run_id)
            return dict(data["proposals"]) if data else {}

    def _erase_merge_texts(self, user_id: Any) -> None:
        self._snapshots = [
            item for item in self._snapshots if self._user_run(user_id, item.run_id) is None
        ]
        for data in self._runs.values():
            if data["user_id"] == user_id:
                data["proposals"] = dict(ERASED_PROPOSALS)
                data["rejected"] = erased_rejections(data["rejected"])

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
                if state.last_activity_at is not None
                and (
                    state.last_success_at is None or state.last_activity_at > state.last_success_at
                )
                and (state.next_run_at is None or state.next_run_at <= now)
            ]

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
