"""The values stores exchange with their callers: runs, plans, merged groups, the optimizer
state, the checks a write runs, and the rules every store applies the same way.

Plain frozen dataclasses and pure functions, no Django: a custom store's tests can use them as
they are.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..errors import MergeConflict, NoteNotFound, StaleVersion
from ..kinds import MergeRunStatus
from ..notes import NewNote, Note, newest_first

if TYPE_CHECKING:
    from ..rules import Notes

#: Called with the person's current notes, as a :class:`~agent_memory.rules.NoteSet` (their
#: counts and a lookup by text, so a store need not read every note) or a plain list of them;
#: raises an ``AgentMemoryError`` to refuse the write. It runs inside the write's transaction and
#: only reads (``DjangoStore`` on PostgreSQL may have begun that transaction in its batch of
#: statements, where an atomic block of the check's own could not start).
CreateCheck = Callable[["Notes"], None]
#: Called with the person's current notes (as for :data:`CreateCheck`) and the note about to change.
UpdateCheck = Callable[["Notes", Note], None]
#: Called with the note about to be deleted; raises an ``AgentMemoryError`` to refuse the delete.
DeleteCheck = Callable[[Note], None]


@dataclass(frozen=True)
class Room:
    """When a write's check is sure to pass, in figures a store can test in the database as it
    writes (see :class:`Guarded`).

    A create passes if, counting it, the person holds at most ``max_notes`` notes and
    ``max_total_chars`` characters, the batch's texts differ from each other (text keys, see
    :func:`~agent_memory.rules.text_digest`), none of its notes is pinned, and no note of the
    person, expired or not, has the text of one of them.

    An update passes if the note is still valid and at the expected version, it is not pinned
    and the update does not pin it, no other note of the person has the new text, and the
    person's characters stay within ``max_total_chars`` (or do not grow); with
    ``same_valid_until``, also if the note's current ``valid_until`` is the new note's.
    """

    max_notes: int
    max_total_chars: int
    same_valid_until: bool = False


@dataclass(frozen=True)
class Guarded:
    """A write's check with its :class:`Room`: a store that can test the room in the statement
    that writes (``DjangoStore`` on PostgreSQL does, in one round trip) may write without
    calling the check when the room holds, and calls it as any check otherwise. It is called
    like the check it wraps, so a store that knows nothing of rooms just calls it."""

    check: Callable[..., None]
    room: Room

    def __call__(self, *notes: Any) -> None:
        self.check(*notes)


@dataclass(frozen=True)
class UnpinnedOnly:
    """A delete's check that refuses a pinned note and nothing else (the agent's deletes): a
    store that can test that in the statement that deletes (``DjangoStore`` on PostgreSQL does,
    in one round trip) may delete an unpinned note without calling the check, and calls it as
    any check otherwise. It is called like the check it wraps."""

    check: DeleteCheck

    def __call__(self, note: Note) -> None:
        self.check(note)


def room_of(check: Callable[..., None]) -> Room | None:
    """The room of a :class:`Guarded` check, ``None`` for any other check."""
    return check.room if isinstance(check, Guarded) else None


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
