"""The base class of every store: :class:`BaseStore`, written the way Django's ``BaseCache`` is.

A store subclasses it and writes the five note methods (``list_notes``, ``insert_notes``,
``update_note``, ``delete_note``, ``clear_notes``); everything else has a working default here,
over those five and over what this object keeps (so in this process only):

- checked writes (``insert_notes_checked``, ``update_note_checked``, ``delete_note_checked``)
  that run the caller's check under the person's lock, held in this process; a store whose lock
  holds across processes (``DjangoStore``) overrides them, so two servers writing for one person
  never both pass a limit;
- the note's earlier versions (``history``), kept by the checked update;
- the person's memory switch, the notes' vectors for search and the optimizer's fingerprint;
- the merge methods, the checked revert and the optimizer state
  (:class:`~agent_memory.stores.merges.MergeMethods`), which need the two note steps that only the
  store can write (``can_merge``).

Callers call the methods; nothing probes a store for them. A subclass that lacks one of the five
note methods cannot be built: ``MemoryStorageNotSupportedError`` names every missing one.

Every method takes the person's primary key as ``user_id`` and must scope its queries by it: a
note of another person is indistinguishable from a missing one (``NoteNotFound``).
"""

from __future__ import annotations

import threading
import weakref
from abc import ABCMeta, abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..errors import MemoryStorageNotSupportedError, NoteNotFound
from ..kinds import NoteSource
from ..notes import MAX_VERSIONS, NewNote, Note, NoteVersion
from .merges import MergeMethods
from .policy import MergePolicy
from .slots import process_slot
from .values import (
    ApplyCheck,
    CreateCheck,
    DeleteCheck,
    Guarded,
    MergedNote,
    MergePlan,
    NoteListing,
    OptimizationRun,
    OptimizerStateRecord,
    RevertCheck,
    Room,
    RunOutcome,
    UnpinnedOnly,
    UpdateCheck,
    at_version,
    check_revert,
    listing_of,
)

if TYPE_CHECKING:
    from ..embeddings import StoredVector
    from ..rules import Notes

#: The five note methods every store writes, in the order errors name them.
NOTE_METHODS = ("list_notes", "insert_notes", "update_note", "delete_note", "clear_notes")

__all__ = [
    "NOTE_METHODS",
    "ApplyCheck",
    "BaseStore",
    "CreateCheck",
    "DeleteCheck",
    "Guarded",
    "MergePlan",
    "MergedNote",
    "NoteListing",
    "OptimizationRun",
    "OptimizerStateRecord",
    "RevertCheck",
    "Room",
    "RunOutcome",
    "UnpinnedOnly",
    "UpdateCheck",
    "at_version",
    "check_revert",
    "listing_of",
    "person_lock",
]


# --- the in-process lock -------------------------------------------------------------------------


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


# --- the base class ------------------------------------------------------------------------------


class BaseStore(MergeMethods, metaclass=ABCMeta):
    """The base of every store: five abstract note methods, and defaults for the rest.

    ``policy``: what merges do to runs and to the optimizer state (default: the optimizer's
    :class:`~agent_memory.stores.policy.MergePolicy`).
    """

    #: Whether a background worker (another process) sees the store's notes, so the optimizer
    #: may run there (``DjangoStore``: yes); otherwise it runs in the process of the turn.
    runs_in_workers = False

    def __new__(cls, *args: Any, **kwargs: Any) -> BaseStore:
        missing = [name for name in NOTE_METHODS if name in cls.__abstractmethods__]
        if missing:
            raise MemoryStorageNotSupportedError(missing)
        return super().__new__(cls)

    def __init__(self, *, policy: MergePolicy | None = None) -> None:
        self.policy = policy or MergePolicy()
        self._init_merges()
        self._kept_guard = threading.Lock()
        self._switches: dict[Any, bool] = {}
        #: Earlier versions by note id, oldest first (at most MAX_VERSIONS each).
        self._versions: dict[int, list[NoteVersion]] = {}
        self._vectors: dict[int, StoredVector] = {}
        self._fingerprints: dict[Any, str] = {}

    # --- the five note methods: every store writes them -------------------------------------

    @abstractmethod
    def list_notes(self, user_id: Any) -> list[Note]:
        """The person's notes still valid (none past its ``valid_until``), most recently
        changed first (``agent_memory.notes``: ``still_valid``, ``newest_first``)."""

    @abstractmethod
    def insert_notes(self, user_id: Any, notes: Sequence[NewNote]) -> list[Note]:
        """Add all of ``notes`` or none, at version 1, ``created_by`` their source; return them in
        the given order. Ids are never reused."""

    @abstractmethod
    def update_note(self, user_id: Any, note_id: int, version: int, note: NewNote) -> Note:
        """Replace the note's categories, text, source, origin and ``valid_until`` (and whether it
        is pinned, unless ``note.pinned`` is ``None``) if its version is still ``version``: the
        note at the next version (:meth:`~agent_memory.notes.Note.updated_to`).

        Raises ``NoteNotFound`` (no such note for this person, or past its ``valid_until``) or
        ``StaleVersion`` (:func:`~agent_memory.stores.values.at_version`).
        """

    @abstractmethod
    def delete_note(self, user_id: Any, note_id: int, version: int) -> None:
        """Delete the note if its version is still ``version``; errors as :meth:`update_note`."""

    @abstractmethod
    def clear_notes(self, user_id: Any) -> int:
        """Delete every note of the person (and whatever else holds their text); return how many
        notes were deleted."""

    # --- checked writes: the check runs under the person's lock -------------------------------

    def _write_lock(self, user_id: Any) -> AbstractContextManager[object]:
        """What the checked writes and merges hold: the person's lock, in this process."""
        return person_lock(self, user_id)

    def _notes_for_check(self, user_id: Any) -> Notes:
        """The person's notes as a write's check sees them (under :meth:`_write_lock`)."""
        return self.list_notes(user_id)

    def _current(self, user_id: Any, note_id: int, version: int) -> Note:
        """The person's note at ``version``; ``NoteNotFound`` or ``StaleVersion``."""
        found = (note for note in self.list_notes(user_id) if note.id == note_id)
        return at_version(next(found, None), note_id, version)

    def insert_notes_checked(
        self, user_id: Any, notes: Sequence[NewNote], check: CreateCheck
    ) -> list[Note]:
        """In one transaction under the person's lock: ``check(current notes)``, then insert.

        ``check`` gets the notes as a :class:`~agent_memory.rules.NoteSet` where the store can
        (their counts, and the notes with a given text, without reading every note) or a list;
        it raises an ``AgentMemoryError`` to refuse the write. A note's vector is not the
        write's business: it is computed when the note is first searched.

        A :class:`~agent_memory.stores.values.Guarded` check is called like any other here; a
        store that can test its :class:`~agent_memory.stores.values.Room` in the statement that
        writes may leave the call out where the room holds (``DjangoStore`` on PostgreSQL).
        """
        with self._write_lock(user_id):
            check(self._notes_for_check(user_id))
            return self.insert_notes(user_id, notes) if notes else []

    def update_note_checked(
        self, user_id: Any, note_id: int, version: int, note: NewNote, check: UpdateCheck
    ) -> Note:
        """In one transaction under the person's lock: find the note (``NoteNotFound``), compare
        its version (``StaleVersion``), ``check(current notes, note)``, then update, keeping the
        note as it was in its :meth:`history`."""
        with self._write_lock(user_id):
            current = self._current(user_id, note_id, version)
            check(self._notes_for_check(user_id), current)
            updated = self.update_note(user_id, note_id, version, note)
            self._keep_version(current)
            return updated

    def delete_note_checked(
        self, user_id: Any, note_id: int, version: int, check: DeleteCheck
    ) -> None:
        """In one transaction under the person's lock: find the note (``NoteNotFound``), compare
        its version (``StaleVersion``), ``check(note)``, then delete it as :meth:`delete_note`
        does."""
        with self._write_lock(user_id):
            check(self._current(user_id, note_id, version))
            self.delete_note(user_id, note_id, version)

    # --- imports: how many run at once ---------------------------------------------------------

    def import_slot(self, slots: int) -> AbstractContextManager[bool]:
        """One of ``slots`` places for an import running at once: yields whether one was free
        (held until the block ends). This default counts the imports of this store object, so
        in this process only; ``DjangoStore`` counts those of every process on its database."""
        return process_slot(("store", id(self)), slots)

    # --- reads for the memory block and the history --------------------------------------------

    def note_listing(self, user_id: Any) -> NoteListing:
        """The person's notes for the memory block (:class:`NoteListing`); this default reads
        them all with ``list_notes``, a store with a database reads the versions alone."""
        return listing_of(self.list_notes(user_id))

    def category_names(self, user_id: Any, leave_out: int | None = None) -> list[str]:
        """The category names of the person's notes, newest note first (a name once per note;
        ``leave_out``: a note whose names not to give). New notes take these spellings."""
        notes = self.list_notes(user_id)
        return [name for note in notes if note.id != leave_out for name in note.categories]

    def _keep_version(self, current: Note) -> None:
        """Keep ``current`` as an earlier version of its note (the last :data:`MAX_VERSIONS`);
        once per version, so a store's ``update_note`` may keep it too."""
        with self._kept_guard:
            kept = self._versions.setdefault(current.id, [])
            if kept and kept[-1].version == current.version:
                return
            kept.append(NoteVersion.of(current))
            del kept[:-MAX_VERSIONS]

    def _drop_versions(self, note_ids: Sequence[int]) -> None:
        """Forget the earlier versions of deleted notes."""
        with self._kept_guard:
            for note_id in note_ids:
                self._versions.pop(note_id, None)

    def history(self, user_id: Any, note_id: int) -> list[NoteVersion]:
        """The note's earlier versions, newest first; ``NoteNotFound`` if the person has no such
        note (deleted, foreign or expired)."""
        if not any(note.id == note_id for note in self.list_notes(user_id)):
            self._drop_versions([note_id])
            raise NoteNotFound.for_id(note_id)
        with self._kept_guard:
            return self._versions.get(note_id, [])[::-1]

    def purge_expired(self, now: datetime, user_id: Any = None) -> dict[Any, list[int]]:
        """Delete the notes whose ``valid_until`` passed by ``now`` (everyone's, or the person
        ``user_id``'s) like any delete; the ids deleted per person.

        This default deletes the person's notes that ``list_notes`` still lists but ``now`` has
        passed (``list_notes`` leaves out those past by the clock already). It knows no list of
        people, so for everyone it deletes nothing: a store that keeps expired notes until
        purged overrides it (``DjangoStore``, ``InMemoryStore``)."""
        if user_id is None:
            return {}
        with self._write_lock(user_id):
            gone = [note for note in self.list_notes(user_id) if note.expired(now)]
            for note in gone:
                self.delete_note(user_id, note.id, note.version)
        return {user_id: [note.id for note in gone]} if gone else {}

    def clear_origin(self, user_id: Any, origin: str) -> int:
        """Forget ``origin`` (a chat the notes came from) on the person's notes, which stay;
        return how many changed. This default updates each such note."""
        with self._write_lock(user_id):
            changed = [note for note in self.list_notes(user_id) if note.origin == origin]
            for note in changed:
                kept = NewNote(
                    note.categories,
                    note.content,
                    NoteSource(note.source),
                    valid_until=note.valid_until,
                )
                self.update_note(user_id, note.id, note.version, kept)
        return len(changed)

    # --- the person's memory switch ------------------------------------------------------------

    def memory_enabled(self, user_id: Any) -> bool:
        """Whether the person's memory is on (it is unless they turned it off)."""
        with self._kept_guard:
            return self._switches.get(user_id, True)

    def set_memory_enabled(self, user_id: Any, on: bool) -> None:
        """Turn the person's memory on or off; their notes stay either way."""
        with self._kept_guard:
            self._switches[user_id] = bool(on)

    # --- vectors for search by meaning, and the optimizer's fingerprint ------------------------

    def list_notes_with_vectors(
        self, user_id: Any, *, vectors: bool = True
    ) -> tuple[list[Note], dict[int, StoredVector]]:
        """The person's notes (as :meth:`list_notes`) and the vectors kept for them."""
        notes = self.list_notes(user_id)
        if not vectors:
            return notes, {}
        return notes, self.vectors_of(user_id, [note.id for note in notes])

    def vectors_of(self, user_id: Any, note_ids: Sequence[int]) -> dict[int, StoredVector]:
        """The vectors kept for some of the person's notes (callers pass only their own ids)."""
        with self._kept_guard:
            return {key: self._vectors[key] for key in note_ids if key in self._vectors}

    def save_vectors(self, user_id: Any, vectors: dict[int, StoredVector]) -> None:
        """Keep (or replace) the vectors of the person's notes; notes gone meanwhile are
        skipped."""
        mine = {note.id for note in self.list_notes(user_id)}
        with self._kept_guard:
            self._vectors.update((key, item) for key, item in vectors.items() if key in mine)

    def get_notes_fingerprint(self, user_id: Any) -> str:
        """What the optimizer saw of the person's notes at its last success (``""``: nothing)."""
        with self._kept_guard:
            return self._fingerprints.get(user_id, "")

    def set_notes_fingerprint(self, user_id: Any, fingerprint: str) -> None:
        with self._kept_guard:
            self._fingerprints[user_id] = fingerprint
