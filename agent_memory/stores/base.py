"""The store protocol: what a place that keeps notes must offer.

Required, the five note methods (:class:`NoteStore`). Optional, for limits that hold across
processes, the checked writes (:class:`CheckedNoteStore`): they run the caller's check callback
inside their own transaction, under the per-user lock, so two servers writing for one person can
never both pass a limit. A store without them still works, but the lock that guards limits and
duplicates is then in-process only: limits are not guaranteed across several servers.

Optional as a set, the merge methods (:class:`MergeStore`) that the optimizer needs.

Every method takes the person's primary key as ``user_id`` and must scope its queries by it: a
note of another person is indistinguishable from a missing one (:class:`NoteNotFound`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ..notes import NewNote, Note

if TYPE_CHECKING:
    from ..embeddings import StoredVector
    from ..optimizer.records import (
        ApplyCheck,
        MergedNote,
        MergePlan,
        OptimizationRun,
        RunOutcome,
    )
    from ..rules import Notes

NOTE_METHODS = ("list_notes", "insert_notes", "update_note", "delete_note", "clear_notes")
CHECKED_METHODS = ("insert_notes_checked", "update_note_checked")
MERGE_METHODS = (
    "claim_optimization_run",
    "finish_optimization_run",
    "apply_merge",
    "revert_merge",
    "list_optimization_runs",
    "list_merged_notes",
)

#: Called with the person's current notes, as a :class:`~agent_memory.rules.NoteSet` (their
#: counts and a lookup by text, so a store need not read every note) or a plain list of them;
#: raises an ``AgentMemoryError`` to refuse the write. It runs inside the write's transaction and
#: only reads (``DjangoStore`` on PostgreSQL may have begun that transaction in its batch of
#: statements, where an atomic block of the check's own could not start).
CreateCheck = Callable[["Notes"], None]
#: Called with the person's current notes (as for :data:`CreateCheck`) and the note about to change.
UpdateCheck = Callable[["Notes", Note], None]


@runtime_checkable
class NoteStore(Protocol):
    """The five methods every store has."""

    def list_notes(self, user_id: Any) -> list[Note]:
        """The person's notes, most recently changed first."""

    def insert_notes(self, user_id: Any, notes: Sequence[NewNote]) -> list[Note]:
        """Add all of ``notes`` or none; version 1; return them in the given order."""

    def update_note(self, user_id: Any, note_id: int, version: int, note: NewNote) -> Note:
        """Replace the note's categories and text if its version is still ``version``.

        Raises ``NoteNotFound`` (no such note for this person) or ``StaleVersion``.
        """

    def delete_note(self, user_id: Any, note_id: int, version: int) -> None:
        """Delete the note if its version is still ``version``; errors as :meth:`update_note`."""

    def clear_notes(self, user_id: Any) -> int:
        """Delete every note of the person (and whatever else holds their text); return how many
        notes were deleted."""


@runtime_checkable
class CheckedNoteStore(NoteStore, Protocol):
    """A store whose writes run a check under a lock that holds across processes."""

    def insert_notes_checked(
        self,
        user_id: Any,
        notes: Sequence[NewNote],
        check: CreateCheck,
        *,
        vectors: Sequence[StoredVector] | None = None,
    ) -> list[Note]:
        """In one transaction under the person's lock: ``check(current notes)``, then insert.

        Pass the notes as a :class:`~agent_memory.rules.NoteSet` to keep the check from reading
        every note: its counts as they are before this write, and the notes with a given text.

        ``vectors`` (optional, one per note, computed before the lock): keep them with the notes
        in the same transaction. A store that keeps vectors (``save_vectors``) should accept it;
        without the keyword, the caller stores them afterwards."""

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
        """In one transaction under the person's lock: find the note (``NoteNotFound``), compare
        its version (``StaleVersion``), ``check(current notes, note)``, then update, and keep
        ``vector`` (optional, as for :meth:`insert_notes_checked`) with it."""


@runtime_checkable
class MergeStore(Protocol):
    """The six merge methods the optimizer needs (values in :mod:`agent_memory.optimizer.records`).

    Every write runs in one transaction under the person's lock. A store may also offer
    ``revert_merge_checked(user_id, run_id, check, *, now)`` (limits that hold across processes),
    ``purge_merge_snapshots(before)`` and the optimizer-state methods
    ``record_optimizer_activity``, ``get_optimizer_state``, ``due_optimizer_users``.
    """

    def claim_optimization_run(
        self, user_id: Any, *, model: str, now: datetime, lease_until: datetime, force: bool = False
    ) -> OptimizationRun | None:
        """Close runs whose lease expired (as failures), then start a run, or return ``None`` if
        a live run holds the lease or (without ``force``) the person is not due."""

    def finish_optimization_run(
        self, user_id: Any, run_id: int, outcome: RunOutcome, *, now: datetime, interval: timedelta
    ) -> bool:
        """Close a live run and count its outcome (backoff or reset); ``False`` if its lease had
        expired (then it is closed as a failure and ``outcome`` is discarded)."""

    def apply_merge(
        self,
        user_id: Any,
        run_id: int,
        plan: MergePlan,
        *,
        now: datetime,
        check: ApplyCheck | None = None,
    ) -> Note:
        """Delete the sources (at the planned versions), create the merged note and keep a
        snapshot; ``LeaseExpired``, ``NoteNotFound``, ``StaleVersion`` or ``check``'s error."""

    def revert_merge(self, user_id: Any, run_id: int, *, now: datetime) -> list[Note]:
        """Restore the run's sources with their ids (version + 1), remove the merged notes and
        purge the snapshots; ``MergeConflict`` if a merged note changed, ``NoteNotFound``."""

    def list_optimization_runs(self, user_id: Any, limit: int = 50) -> list[OptimizationRun]:
        """The person's runs, newest first."""

    def list_merged_notes(self, user_id: Any) -> list[MergedNote]:
        """The person's applied groups that still have snapshots, newest run first."""


def runs_in_workers(store: object) -> bool:
    """Whether a background worker (another process) sees the store's notes, so the optimizer
    may run there: a store says so with ``runs_in_workers = True`` (``DjangoStore`` does)."""
    return getattr(store, "runs_in_workers", False) is True


def missing_methods(store: object, names: Sequence[str]) -> list[str]:
    """The names in ``names`` that ``store`` does not have as callables."""
    return [name for name in names if not callable(getattr(store, name, None))]


def supports(store: object, names: Sequence[str]) -> bool:
    return not missing_methods(store, names)
