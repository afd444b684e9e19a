"""The store protocol, the values stores exchange with their callers, and a base class.

Required, the five note methods (:class:`NoteStore`). Optional, for limits that hold across
processes, the checked writes (:class:`CheckedNoteStore`): they run the caller's check callback
inside their own transaction, under the per-user lock, so two servers writing for one person can
never both pass a limit. :class:`StoreBase` gives every store checked writes that hold the lock
in this process only, and :func:`checked` gives them to a store that has only the five methods:
the callers always call the checked methods.

Optional as a set, the merge methods (:class:`MergeStore`) that the optimizer needs, with the
plain values they take and return (:class:`OptimizationRun`, :class:`MergePlan`, …). What a
merge does to a run and to the person's optimizer state is decided by a :class:`MergePolicy`
(the optimizer's, installed when the app is ready), so every store follows the same rules;
:class:`~agent_memory.stores.merges.MergeStoreBase` writes the merge methods once, over a few
storage steps of each store.

Every method takes the person's primary key as ``user_id`` and must scope its queries by it: a
note of another person is indistinguishable from a missing one (:class:`NoteNotFound`).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Protocol, cast, runtime_checkable

from ..errors import MergeConflict, NoteNotFound, StaleVersion
from ..kinds import MergeRunStatus
from ..notes import NewNote, Note, NoteVersion, newest_first

if TYPE_CHECKING:
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
#: The optional store methods for the person's memory switch (:func:`switch_of`).
SWITCH_METHODS = ("memory_enabled", "set_memory_enabled")
#: The optional store methods for per-person optimizer state (beside the merge methods).
STATE_METHODS = (
    "record_optimizer_activity",
    "get_optimizer_state",
    "due_optimizer_users",
)

#: Called with the person's current notes, as a :class:`~agent_memory.rules.NoteSet` (their
#: counts and a lookup by text, so a store need not read every note) or a plain list of them;
#: raises an ``AgentMemoryError`` to refuse the write. It runs inside the write's transaction and
#: only reads (``DjangoStore`` on PostgreSQL may have begun that transaction in its batch of
#: statements, where an atomic block of the check's own could not start).
CreateCheck = Callable[["Notes"], None]
#: Called with the person's current notes (as for :data:`CreateCheck`) and the note about to change.
UpdateCheck = Callable[["Notes", Note], None]
#: ``check(current notes except the sources, the sources)``: raise to refuse applying a group.
ApplyCheck = Callable[[list[Note], list[Note]], None]
#: ``check(notes that stay after removing the merged notes, the originals to restore)``.
RevertCheck = Callable[[list[Note], list[Note]], None]


# --- the values of merges ----------------------------------------------------------------------


@dataclass(frozen=True)
class OptimizationRun:
    """One run as a store reports it."""

    id: int
    user_id: Any
    status: MergeRunStatus
    model: str
    started_at: datetime
    lease_expires_at: datetime
    finished_at: datetime | None = None
    reverted_at: datetime | None = None
    #: The applied groups: ``{"index", "merged_id", "source_ids"}`` each.
    applied: list[dict[str, Any]] = field(default_factory=list)
    rejected: list[dict[str, Any]] = field(default_factory=list)
    error: str = ""
    #: The groups the person reverted: ``{"index", "merged_id", "source_ids"}`` each.
    reverted: list[dict[str, Any]] = field(default_factory=list)
    #: What the model was sent and proposed (for ops; erased with the person's memory).
    proposals: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class OptimizerStateRecord:
    """A person's optimizer state."""

    consecutive_failures: int = 0
    next_run_at: datetime | None = None
    last_success_at: datetime | None = None
    last_activity_at: datetime | None = None
    model: str = ""
    #: Optimizer options given in code (``LongTermMemory(optimizer={...})``) with the last turn.
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class MergePlan:
    """One checked group to apply: the sources at the versions the model saw, and the new note."""

    group_index: int
    sources: dict[int, int]  # note id -> version seen by the model
    note: NewNote


@dataclass(frozen=True)
class MergedNote:
    """One applied group still revertable: the merged note's id/version and the sources."""

    run_id: int
    group_index: int
    merged_note_id: int
    merged_version: int
    sources: tuple[Note, ...]
    created_at: datetime
    #: The merged note was deleted: the sources' texts are gone, only their ids are kept.
    forgotten: bool = False


@dataclass(frozen=True)
class RunOutcome:
    """What the runner hands to ``finish_optimization_run``."""

    succeeded: bool
    proposals: dict[str, Any] = field(default_factory=dict)
    applied: list[dict[str, Any]] = field(default_factory=list)
    rejected: list[dict[str, Any]] = field(default_factory=list)
    error: str = ""


class MergePolicy(Protocol):
    """What merges do to runs and to the person's optimizer state: the same for every store.

    Stores call it inside their transactions; every method is pure (a new value, nothing kept).
    The optimizer's (:class:`agent_memory.optimizer.policy.MergePolicy`) is installed when the
    app is ready; a store built with ``policy=`` uses that one instead.
    """

    @property
    def erased_proposals(self) -> dict[str, Any]:
        """What an erased run's proposals are (stores may look for it in a query)."""

    def is_due(self, state: OptimizerStateRecord, now: datetime) -> bool:
        """Whether the person's next run may start at ``now`` (unless forced)."""

    def wants_run(self, state: OptimizerStateRecord, now: datetime) -> bool:
        """Whether the sweep should run the person at ``now``: active since their last success
        and due."""

    def after_outcome(
        self,
        state: OptimizerStateRecord,
        *,
        now: datetime,
        succeeded: bool,
        interval: timedelta | None = None,
    ) -> OptimizerStateRecord:
        """The state after a run ended at ``now``: a success resets the backoff and waits
        ``interval``; a failure backs off."""

    def holds_lease(self, run: OptimizationRun, now: datetime) -> bool:
        """Whether ``run`` is still live at ``now``."""

    def lease_expired(self, run: OptimizationRun, now: datetime) -> OptimizationRun:
        """The run closed as a failure because its lease ran out (count it with
        :meth:`after_outcome`)."""

    def finished(
        self, run: OptimizationRun, outcome: RunOutcome, *, now: datetime, live_ids: set[int]
    ) -> OptimizationRun:
        """The run closed with ``outcome``; ``live_ids``: the person's notes now (what the model
        wrote about notes deleted meanwhile is forgotten)."""

    def applied(
        self, run: OptimizationRun, plan: MergePlan, merged_id: int, sources: Sequence[Note]
    ) -> OptimizationRun:
        """The run with the group of ``plan`` applied as note ``merged_id``."""

    def reverted(
        self, run: OptimizationRun, groups: Sequence[MergedNote], now: datetime
    ) -> OptimizationRun:
        """The run with ``groups`` reverted at ``now`` (remembered as kept apart)."""

    def erased(self, run: OptimizationRun) -> OptimizationRun:
        """The run without any text of the person's notes (erase-all, retention)."""

    def forget(self, run: OptimizationRun, deleted: Mapping[int, str]) -> OptimizationRun:
        """The run without the text of the ``deleted`` notes (id → text)."""

    def forget_sources(self, merged: MergedNote) -> MergedNote:
        """A group whose merged note was deleted: its sources keep only their ids and
        versions (reverting it still answers "conflict")."""

    def kept_apart(self, runs: Sequence[OptimizationRun]) -> list[tuple[int, ...]]:
        """The sets of note ids the person reverted (never to be merged again), from their runs."""


_default_policy: MergePolicy | None = None


def use_merge_policy(policy: MergePolicy) -> None:
    """Make ``policy`` the one of every store built without ``policy=`` (the app does this)."""
    global _default_policy
    _default_policy = policy


# --- the protocols -----------------------------------------------------------------------------


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
    """A store whose writes run a check under the person's lock."""

    def insert_notes_checked(
        self,
        user_id: Any,
        notes: Sequence[NewNote],
        check: CreateCheck,
    ) -> list[Note]:
        """In one transaction under the person's lock: ``check(current notes)``, then insert.

        Pass the notes as a :class:`~agent_memory.rules.NoteSet` to keep the check from reading
        every note: its counts as they are before this write, and the notes with a given text.

        A note's vector for search by meaning is not the write's business: it is computed
        when the note is first searched, or ahead by ``memory_embed``."""

    def update_note_checked(
        self,
        user_id: Any,
        note_id: int,
        version: int,
        note: NewNote,
        check: UpdateCheck,
    ) -> Note:
        """In one transaction under the person's lock: find the note (``NoteNotFound``), compare
        its version (``StaleVersion``), ``check(current notes, note)``, then update."""


class CheckedStore(CheckedNoteStore, Protocol):
    """What :func:`checked` gives: checked writes, a checked revert for a store with merges, and
    the note's history and the purge of expired notes (defaults of :class:`StoreBase`)."""

    def history(self, user_id: Any, note_id: int) -> list[NoteVersion]:
        """The note's earlier versions, newest first (``NoteNotFound``)."""

    def purge_expired(self, now: datetime, user_id: Any = None) -> dict[Any, list[int]]:
        """Delete the notes past their ``valid_until``; the ids deleted per person."""

    def revert_merge_checked(
        self,
        user_id: Any,
        run_id: int,
        check: RevertCheck | None,
        *,
        now: datetime,
        group: int | None = None,
    ) -> list[Note]:
        """In one transaction under the person's lock: the merged notes of the run (or of its
        group ``group``) are unchanged (``MergeConflict``), ``check(remaining notes,
        originals)``, then :meth:`MergeStore.revert_merge`."""


@dataclass(frozen=True)
class NoteListing:
    """The person's notes as the memory block reads them: ``versions``, the ``(id, version)``
    of every note, pinned first, then newest first (cheap to read), and ``read(ids)``, the full
    notes with those ids in that order (the block reads only as many as it has room for)."""

    versions: Sequence[tuple[int, int]]
    read: Callable[[Sequence[int]], list[Note]]


def listing_of(notes: Iterable[Note]) -> NoteListing:
    """Notes already read, as a :class:`NoteListing` (pinned first, then newest first)."""
    newest = newest_first(list(notes))
    ordered = [note for note in newest if note.pinned] + [n for n in newest if not n.pinned]
    by_id = {note.id: note for note in ordered}
    return NoteListing(
        versions=[(note.id, note.version) for note in ordered],
        read=lambda ids: [by_id[note_id] for note_id in ids if note_id in by_id],
    )


@runtime_checkable
class MergeStore(Protocol):
    """The six merge methods the optimizer needs.

    Every write runs in one transaction under the person's lock. A store may also offer
    ``revert_merge_checked(user_id, run_id, check, *, now)`` (:class:`StoreBase` has one that
    holds in this process), ``purge_merge_snapshots(before)`` and the optimizer-state methods
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


# --- rules every store applies the same way ------------------------------------------------------


def at_version(current: Note | None, note_id: int, version: int) -> Note:
    """``current`` if it is the note at ``version``; else ``NoteNotFound`` or ``StaleVersion``."""
    if current is None:
        raise NoteNotFound.for_id(note_id)
    if current.version != version:
        raise StaleVersion.for_note(note_id, version, current.version)
    return current


def check_revert(
    groups: Sequence[MergedNote], notes: Sequence[Note], check: RevertCheck | None
) -> list[Note]:
    """Before reverting ``groups``: ``MergeConflict`` unless every group's merged note is still
    among the person's ``notes`` at the version the merge gave it (reverting would otherwise
    lose a change), then ``check(the notes that stay, the originals)``. Returns the merged
    notes, in the order of ``groups``."""
    by_id = {note.id: note for note in notes}
    merged = []
    for group in groups:
        current = by_id.get(group.merged_note_id)
        if current is None or current.version != group.merged_version:
            raise MergeConflict.for_merged_note(group.merged_note_id)
        merged.append(current)
    if check is not None:
        merged_ids = {note.id for note in merged}
        check(
            [note for note in notes if note.id not in merged_ids],
            [note for group in groups for note in group.sources],
        )
    return merged


# --- the in-process lock, and the base class -----------------------------------------------------


class _PersonLock:
    """A lock that can be weakly referenced, so the table below forgets idle persons."""

    __slots__ = ("__weakref__", "lock")

    def __init__(self) -> None:
        self.lock = threading.Lock()


_person_locks: weakref.WeakValueDictionary[tuple[int, Any], _PersonLock] = (
    weakref.WeakValueDictionary()
)
_person_locks_guard = threading.Lock()


@contextmanager
def person_lock(store: object, user_id: Any) -> Iterator[None]:
    """Hold the person's lock of ``store`` in this process (not across processes)."""
    key = (id(store), user_id)
    with _person_locks_guard:
        holder = _person_locks.get(key)
        if holder is None:
            holder = _person_locks[key] = _PersonLock()
    with holder.lock:
        yield


class StoreBase:
    """Safe defaults for a store: checked writes (and a checked revert, for a store with the
    merge methods) that run the check under the person's lock in this process only.

    A store whose lock holds across processes overrides them. ``policy``: the merge policy
    (default: the app's).
    """

    def __init__(self, *, policy: MergePolicy | None = None) -> None:
        self._policy = policy
        self._switches: dict[Any, bool] = {}

    @property
    def policy(self) -> MergePolicy:
        policy = self._policy or _default_policy
        if policy is None:
            raise RuntimeError(
                "No merge policy: add agent_memory to INSTALLED_APPS (its app installs one) "
                "or build the store with policy=."
            )
        return policy

    def _write_lock(self, user_id: Any) -> AbstractContextManager[object]:
        """What the checked writes hold: the person's lock of this store, in this process."""
        return person_lock(self, user_id)

    def _notes_for_check(self, user_id: Any) -> Notes:
        """The person's notes as a write's check sees them (under :meth:`_write_lock`)."""
        return self.list_notes(user_id)

    def _current(self, user_id: Any, note_id: int, version: int) -> Note:
        """The person's note at ``version``; ``NoteNotFound`` or ``StaleVersion``."""
        found = (note for note in self.list_notes(user_id) if note.id == note_id)
        return at_version(next(found, None), note_id, version)

    def note_listing(self, user_id: Any) -> NoteListing:
        """The person's notes for the memory block (:class:`NoteListing`); this default reads
        them all with ``list_notes``, a store with a database reads the versions alone."""
        return listing_of(self.list_notes(user_id))

    def _forget(self, user_id: Any, deleted: dict[int, str]) -> None:
        """Remove the text of the ``deleted`` notes (id → text) from whatever the store keeps
        beside the notes; called by its deletes (:class:`~.merges.MergeStoreBase` keeps some)."""

    def _erase_merges(self, user_id: Any) -> None:
        """Erase everything kept beside the person's notes; called when they are all deleted."""

    # --- the person's memory switch ----------------------------------------------------------
    #
    # Kept in this object by default (so in this process only); a store that keeps it with the
    # notes (``DjangoStore``: in the person's lock row) overrides both.

    def memory_enabled(self, user_id: Any) -> bool:
        """Whether the person's memory is on (it is unless they turned it off)."""
        return self._switches.get(user_id, True)

    def set_memory_enabled(self, user_id: Any, on: bool) -> None:
        """Turn the person's memory on or off; their notes stay either way."""
        self._switches[user_id] = bool(on)

    def history(self, user_id: Any, note_id: int) -> list[NoteVersion]:
        """The note's earlier versions, newest first; ``NoteNotFound`` if the person has no such
        note. The default keeps no versions: a store overrides it to keep them."""
        if not any(note.id == note_id for note in self.list_notes(user_id)):
            raise NoteNotFound.for_id(note_id)
        return []

    def purge_expired(self, now: datetime, user_id: Any = None) -> dict[Any, list[int]]:
        """Delete the notes whose ``valid_until`` passed by ``now`` (everyone's, or the person
        ``user_id``'s) like any delete; the ids deleted per person. The default deletes nothing:
        a store that keeps ``valid_until`` overrides it (and leaves expired notes out of
        :meth:`list_notes`)."""
        return {}

    def insert_notes_checked(
        self,
        user_id: Any,
        notes: Sequence[NewNote],
        check: CreateCheck,
    ) -> list[Note]:
        with self._write_lock(user_id):
            check(self._notes_for_check(user_id))
            return self.insert_notes(user_id, notes) if notes else []

    def update_note_checked(
        self,
        user_id: Any,
        note_id: int,
        version: int,
        note: NewNote,
        check: UpdateCheck,
    ) -> Note:
        with self._write_lock(user_id):
            current = self._current(user_id, note_id, version)
            check(self._notes_for_check(user_id), current)
            return self.update_note(user_id, note_id, version, note)

    def revert_merge_checked(
        self,
        user_id: Any,
        run_id: int,
        check: RevertCheck | None,
        *,
        now: datetime,
        group: int | None = None,
    ) -> list[Note]:
        with self._write_lock(user_id):
            mine = [
                item
                for item in self.list_merged_notes(user_id)
                if item.run_id == run_id and (group is None or item.group_index == group)
            ]
            if not mine:
                raise NoteNotFound.for_merge(run_id, group)
            check_revert(mine, self.list_notes(user_id), check)
            where = {} if group is None else {"group": group}
            return list(self.revert_merge(user_id, run_id, now=now, **where))

    if TYPE_CHECKING:  # provided by the store itself (the protocols above)

        def list_notes(self, user_id: Any) -> list[Note]: ...

        def insert_notes(self, user_id: Any, notes: Sequence[NewNote]) -> list[Note]: ...

        def update_note(self, user_id: Any, note_id: int, version: int, note: NewNote) -> Note: ...

        def list_merged_notes(self, user_id: Any) -> list[MergedNote]: ...

        def revert_merge(
            self, user_id: Any, run_id: int, *, now: datetime, group: int | None = None
        ) -> list[Note]: ...


class _LockedWrites(StoreBase):
    """A store with only the five note methods (or the merge methods without a checked revert),
    given :class:`StoreBase`'s checked writes; everything else is the store's own."""

    def __init__(self, store: Any) -> None:
        super().__init__()
        self._store = store

    def _write_lock(self, user_id: Any) -> AbstractContextManager[object]:
        return person_lock(self._store, user_id)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def list_notes(self, user_id: Any) -> list[Note]:
        return list(self._store.list_notes(user_id))

    def insert_notes(self, user_id: Any, notes: Sequence[NewNote]) -> list[Note]:
        return list(self._store.insert_notes(user_id, notes))

    def update_note(self, user_id: Any, note_id: int, version: int, note: NewNote) -> Note:
        note_after: Note = self._store.update_note(user_id, note_id, version, note)
        return note_after

    def list_merged_notes(self, user_id: Any) -> list[MergedNote]:
        return list(self._store.list_merged_notes(user_id))

    def history(self, user_id: Any, note_id: int) -> list[NoteVersion]:
        own = getattr(self._store, "history", None)  # a store that keeps versions has its own
        return list(own(user_id, note_id)) if callable(own) else super().history(user_id, note_id)

    def purge_expired(self, now: datetime, user_id: Any = None) -> dict[Any, list[int]]:
        own = getattr(self._store, "purge_expired", None)
        return dict(own(now, user_id)) if callable(own) else {}

    def revert_merge(
        self, user_id: Any, run_id: int, *, now: datetime, group: int | None = None
    ) -> list[Note]:
        where = {} if group is None else {"group": group}
        return list(self._store.revert_merge(user_id, run_id, now=now, **where))


class MemorySwitch(Protocol):
    """The person's memory switch, as :func:`switch_of` gives it."""

    def memory_enabled(self, user_id: Any) -> bool: ...

    def set_memory_enabled(self, user_id: Any, on: bool) -> None: ...


class _ProcessSwitch:
    """The switch of a store that keeps none: held in this object, so in this process only."""

    def __init__(self) -> None:
        self._switches: dict[Any, bool] = {}
        self._guard = threading.Lock()

    def memory_enabled(self, user_id: Any) -> bool:
        with self._guard:
            return self._switches.get(user_id, True)

    def set_memory_enabled(self, user_id: Any, on: bool) -> None:
        with self._guard:
            self._switches[user_id] = bool(on)


def switch_of(store: Any) -> MemorySwitch:
    """``store`` if it keeps the memory switch (:data:`SWITCH_METHODS`, as every
    :class:`StoreBase` does); else a switch held in this process only."""
    if supports(store, SWITCH_METHODS):
        return cast(MemorySwitch, store)
    return _ProcessSwitch()


def checked(store: Any) -> CheckedStore:
    """``store`` if it has the checked writes (and, with merges, the checked revert); else the
    store with :class:`StoreBase`'s, which hold the person's lock in this process only."""
    needed = [*CHECKED_METHODS]
    if supports(store, MERGE_METHODS):
        needed.append("revert_merge_checked")
    if supports(store, needed):
        return cast(CheckedStore, store)
    return _LockedWrites(store)
