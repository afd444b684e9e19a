"""The merge methods of every store, written once over a few storage steps.

:class:`MergeMethods` is part of :class:`~agent_memory.stores.base.BaseStore`. Each merge
method runs in one transaction under the person's lock (``_write_lock``), asks the store's
:class:`~agent_memory.stores.policy.MergePolicy` what becomes of the run and the optimizer state,
and keeps the result through the storage steps below (marked *storage*). Their defaults keep
runs, snapshots and the optimizer state in this object (so in this process only); a store that
keeps them elsewhere (``DjangoStore``: in its tables) overrides them.

Two steps touch the notes and have no default, since only the store can put a note back with
its id: ``_merge_notes`` and ``_unmerge_notes``. A store that writes them sets
``can_merge = True``; without them a merge answers ``MemoryStorageNotSupportedError``.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from ..errors import LeaseExpired, MemoryStorageNotSupportedError, NoteNotFound
from ..kinds import MergeRunStatus, NoteSource
from ..notes import NewNote, Note
from .policy import MergePolicy
from .values import (
    ApplyCheck,
    MergedNote,
    MergePlan,
    OptimizationRun,
    OptimizerStateRecord,
    RevertCheck,
    RunOutcome,
    at_version,
    check_revert,
)


class MergeMethods:
    """The merge methods, the checked revert, ``kept_apart``, ``purge_merge_snapshots`` and the
    optimizer state, over the storage steps below."""

    #: Whether the store writes ``_merge_notes`` and ``_unmerge_notes`` (merges need them).
    can_merge = False

    policy: MergePolicy

    def _init_merges(self) -> None:
        """The default storage of runs, snapshots and optimizer states: this object."""
        self._merge_guard = threading.RLock()
        self._runs: dict[int, OptimizationRun] = {}
        self._run_ids = itertools.count(1)
        self._snapshots: dict[Any, dict[tuple[int, int], MergedNote]] = {}
        self._states: dict[Any, OptimizerStateRecord] = {}

    if TYPE_CHECKING:  # the rest of BaseStore

        def _write_lock(self, user_id: Any) -> AbstractContextManager[object]: ...

        def list_notes(self, user_id: Any) -> list[Note]: ...

        def memory_enabled(self, user_id: Any) -> bool: ...

    # --- storage: what a store may write its own way --------------------------------------

    def _atomic(self) -> AbstractContextManager[object]:
        """*Storage.* One transaction (no person's lock)."""
        return self._merge_guard

    def _runs_of(self, user_id: Any, *, running: bool = False) -> list[OptimizationRun]:
        """*Storage.* The person's runs (only the live ones with ``running``), oldest first."""
        return [
            run
            for _, run in sorted(self._runs.items())
            if run.user_id == user_id and (not running or run.status == MergeRunStatus.RUNNING)
        ]

    def _run_of(self, user_id: Any, run_id: int) -> OptimizationRun | None:
        """*Storage.* The person's run ``run_id``, if there is one."""
        run = self._runs.get(run_id)
        return run if run is not None and run.user_id == user_id else None

    def _add_run(
        self, user_id: Any, *, model: str, now: datetime, lease_until: datetime
    ) -> OptimizationRun:
        """*Storage.* A new live run with its id."""
        run = OptimizationRun(
            next(self._run_ids), user_id, MergeRunStatus.RUNNING, model, now, lease_until
        )
        self._runs[run.id] = run
        return run

    def _put_run(self, before: OptimizationRun, after: OptimizationRun) -> None:
        """*Storage.* Keep ``after`` in place of ``before`` (the same run)."""
        self._runs[after.id] = after

    def _runs_with_text(
        self, user_id: Any, finished_before: datetime | None = None
    ) -> list[OptimizationRun]:
        """*Storage.* The runs that may keep note text (not erased yet): the person's, or with
        ``finished_before`` everyone's finished before it."""
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
        """*Storage.* Keep ``after`` as the person's state (it was ``before``)."""
        self._states[user_id] = after

    def _live_note_ids(self, user_id: Any) -> set[int]:
        """*Storage.* The ids of the person's notes."""
        return {note.id for note in self.list_notes(user_id)}

    def _merge_notes(
        self, user_id: Any, sources: Sequence[Note], note: NewNote, now: datetime
    ) -> Note:
        """*Storage, no default.* Delete ``sources`` and add ``note`` (version 1) in their place."""
        raise MemoryStorageNotSupportedError(["_merge_notes", "_unmerge_notes"], feature="merges")

    def _unmerge_notes(
        self, user_id: Any, merged: Sequence[Note], originals: Sequence[Note], now: datetime
    ) -> list[Note]:
        """*Storage, no default.* Delete ``merged`` and put ``originals`` back with their ids,
        each at its next version, changed ``now``."""
        raise MemoryStorageNotSupportedError(["_merge_notes", "_unmerge_notes"], feature="merges")

    def _snapshots_of(
        self, user_id: Any, run_id: int | None = None, merged_ids: Sequence[int] | None = None
    ) -> list[MergedNote]:
        """*Storage.* The person's snapshots (of run ``run_id``, or whose merged note is one of
        ``merged_ids``), by group."""
        return [
            item
            for _, item in sorted(self._snapshots.get(user_id, {}).items())
            if (run_id is None or item.run_id == run_id)
            and (merged_ids is None or item.merged_note_id in merged_ids)
        ]

    def _add_snapshot(self, user_id: Any, item: MergedNote) -> None:
        """*Storage.* Keep a new snapshot."""
        self._snapshots.setdefault(user_id, {})[item.run_id, item.group_index] = item

    def _put_snapshot(self, user_id: Any, item: MergedNote) -> None:
        """*Storage.* Keep ``item`` in place of the snapshot of its run and group."""
        self._add_snapshot(user_id, item)

    def _drop_snapshots(self, user_id: Any, items: Sequence[MergedNote] | None = None) -> None:
        """*Storage.* Delete the person's snapshots ``items`` (all of them if ``None``)."""
        kept = self._snapshots.pop(user_id, {})
        if items is not None:
            dropped = {(item.run_id, item.group_index) for item in items}
            self._snapshots[user_id] = {k: v for k, v in kept.items() if k not in dropped}

    def _purge_snapshots(self, before: datetime) -> int:
        """*Storage.* Delete everyone's snapshots kept since before ``before``; how many went."""
        purged = 0
        for kept in self._snapshots.values():
            for key, item in list(kept.items()):
                if item.created_at < before:
                    del kept[key]
                    purged += 1
        return purged

    def list_optimization_runs(self, user_id: Any, limit: int = 50) -> list[OptimizationRun]:
        """The person's runs, newest first."""
        with self._atomic():
            return self._runs_of(user_id)[::-1][:limit]

    def run_proposals(self, user_id: Any, run_id: int) -> dict[str, Any]:
        """What the model was sent and proposed in the person's run ``run_id`` (for ops)."""
        with self._atomic():
            run = self._run_of(user_id, run_id)
            return dict(run.proposals) if run else {}

    # --- the optimizer state (storage) ------------------------------------------------------

    def record_optimizer_activity(
        self, user_id: Any, *, at: datetime, model: str
    ) -> OptimizerStateRecord:
        """*Storage.* A turn of the person at ``at`` with the model alias ``model``."""
        with self._atomic():
            state = replace(
                self._states.get(user_id, OptimizerStateRecord()),
                last_activity_at=at,
                model=model,
            )
            self._states[user_id] = state
            return state

    def get_optimizer_state(self, user_id: Any) -> OptimizerStateRecord:
        """*Storage.* The person's optimizer state."""
        with self._atomic():
            return self._states.get(user_id, OptimizerStateRecord())

    def due_optimizer_users(self, now: datetime) -> list[tuple[Any, str]]:
        """*Storage.* The people the sweep should run at ``now`` (active since their last success
        and due, memory on), with their model alias."""
        with self._atomic():
            due = [
                (user_id, state.model or "default")
                for user_id, state in self._states.items()
                if self.policy.wants_run(state, now)
            ]
        return [(user_id, model) for user_id, model in due if self.memory_enabled(user_id)]

    # --- the merge methods ----------------------------------------------------------------

    def claim_optimization_run(
        self,
        user_id: Any,
        *,
        model: str,
        now: datetime,
        lease_until: datetime,
        force: bool = False,
    ) -> OptimizationRun | None:
        """Start a run for the person, or ``None`` if a live run holds the lease or none is due.

        Runs whose lease has expired are closed as failures first.
        """
        with self._write_lock(user_id):
            for run in self._runs_of(user_id, running=True):
                if self.policy.holds_lease(run, now):
                    return None
                self._close_expired(run, now)
            if not force and not self.policy.is_due(self.get_optimizer_state(user_id), now):
                return None
            return self._add_run(user_id, model=model, now=now, lease_until=lease_until)

    def finish_optimization_run(
        self,
        user_id: Any,
        run_id: int,
        outcome: RunOutcome,
        *,
        now: datetime,
        interval: timedelta,
    ) -> bool:
        """Close a live run and count its outcome; ``False`` if it had lost its lease (then it is
        closed as a failure and ``outcome`` is discarded)."""
        with self._write_lock(user_id):
            run = self._run_of(user_id, run_id)
            if run is None or run.status != MergeRunStatus.RUNNING:
                return False
            if not self.policy.holds_lease(run, now):
                self._close_expired(run, now)
                return False
            live = self._live_note_ids(user_id)
            self._put_run(run, self.policy.finished(run, outcome, now=now, live_ids=live))
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
        """In one transaction under the person's lock: delete the sources (at the versions the
        model saw), create the merged note and keep a snapshot of the sources.

        Raises ``LeaseExpired`` if the run is no longer live, ``NoteNotFound`` / ``StaleVersion``
        if a source is gone or changed, or whatever ``check`` raises.
        """
        with self._write_lock(user_id):
            run = self._run_of(user_id, run_id)
            if run is None or not self.policy.holds_lease(run, now):
                raise LeaseExpired.for_run(run_id)
            existing = self.list_notes(user_id)
            by_id = {note.id: note for note in existing}
            sources = [
                at_version(by_id.get(note_id), note_id, version)
                for note_id, version in plan.sources.items()
            ]
            if check is not None:
                check([note for note in existing if note.id not in plan.sources], sources)
            merged = self._merge_notes(
                user_id, sources, replace(plan.note, source=NoteSource.MERGE, origin=""), now
            )
            self._forget(user_id, {note.id: note.content for note in sources})
            self._add_snapshot(
                user_id,
                MergedNote(
                    run_id, plan.group_index, merged.id, merged.version, tuple(sources), now
                ),
            )
            self._put_run(run, self.policy.applied(run, plan, merged.id, sources))
            return merged

    def revert_merge(
        self, user_id: Any, run_id: int, *, now: datetime, group: int | None = None
    ) -> list[Note]:
        """Revert a run (or its group ``group``) without limit or duplicate checks (see
        :meth:`revert_merge_checked`)."""
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
        """In one transaction under the person's lock: make sure every merged note of the run
        (or of its group ``group``) is unchanged (``MergeConflict``), ``check(remaining notes,
        originals)``, then remove those merged notes, restore the originals with their ids
        (version + 1), purge those snapshots and remember the groups as kept apart."""
        with self._write_lock(user_id):
            run = self._run_of(user_id, run_id)
            chosen = [
                item
                for item in self._snapshots_of(user_id, run_id=run_id)
                if group is None or item.group_index == group
            ]
            if run is None or not chosen:
                raise NoteNotFound.for_merge(run_id, group)
            merged = check_revert(chosen, self.list_notes(user_id), check)
            originals = [note for item in chosen for note in item.sources]
            restored = self._unmerge_notes(user_id, merged, originals, now)
            self._drop_snapshots(user_id, chosen)
            self._put_run(run, self.policy.reverted(run, chosen, now))
            return restored

    def list_merged_notes(self, user_id: Any) -> list[MergedNote]:
        """The person's applied groups that still have snapshots, newest run first."""
        with self._atomic():
            items = self._snapshots_of(user_id)
        return sorted(items, key=lambda item: (-item.run_id, item.group_index))

    def kept_apart(self, user_id: Any) -> list[tuple[int, ...]]:
        """The sets of note ids the person reverted: never to be merged again."""
        with self._atomic():
            runs = self._runs_of(user_id)
        return self.policy.kept_apart(runs)

    def purge_merge_snapshots(self, before: datetime) -> int:
        """Delete every snapshot kept since before ``before`` (retention), and the proposals
        and rejection reasons of runs finished before it; return how many snapshots went."""
        with self._atomic():
            purged = self._purge_snapshots(before)
            for run in self._runs_with_text(None, finished_before=before):
                self._put_run(run, self.policy.erased(run))
        return purged

    # --- what deleting and erasing notes do to the merges' copies of them -------------------

    def _forget(self, user_id: Any, deleted: dict[int, str]) -> None:
        """Remove the text of the ``deleted`` notes (id → text) from every copy kept beside the
        notes; runs inside the deleting transaction. A snapshot whose merged note is deleted can
        never be reverted: its originals are forgotten too, and only their ids stay (so
        reverting it still answers "conflict") until the snapshot expires."""
        deleted = dict(deleted)
        for item in self._snapshots_of(user_id, merged_ids=list(deleted)):
            if not item.forgotten:
                deleted.update((note.id, note.content) for note in item.sources)
                self._put_snapshot(user_id, self.policy.forget_sources(item))
        for run in self._runs_with_text(user_id):
            forgotten = self.policy.forget(run, deleted)
            if forgotten != run:
                self._put_run(run, forgotten)

    def _erase_merges(self, user_id: Any) -> None:
        """Drop the person's snapshots and erase the text of their runs (erase-all)."""
        self._drop_snapshots(user_id)
        for run in self._runs_with_text(user_id):
            self._put_run(run, self.policy.erased(run))

    # --- the optimizer state ----------------------------------------------------------------

    def _count_outcome(
        self, user_id: Any, now: datetime, succeeded: bool, interval: timedelta | None = None
    ) -> None:
        before = self.get_optimizer_state(user_id)
        after = self.policy.after_outcome(before, now=now, succeeded=succeeded, interval=interval)
        self._put_state(user_id, before, after)

    def _close_expired(self, run: OptimizationRun, now: datetime) -> None:
        self._put_run(run, self.policy.lease_expired(run, now))
        self._count_outcome(run.user_id, now, succeeded=False)
