"""The person's notes through the front door: read, search, write, pin, and the memory switch.

:class:`NoteMemory` is the part of :class:`~agent_memory.LongTermMemory` every other part
builds on: it holds the store and calls its methods; :mod:`~agent_memory.rules` cleans and
checks what is written before the store writes it under the person's lock.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import Any, TypeVar

from django.utils import timezone
from django.utils.translation import gettext

from .. import embeddings, prompt, rules, signals
from ..conf import Limits, memory_settings
from ..errors import (
    DuplicateNote,
    ErrorCode,
    InvalidNote,
    LimitReached,
    NoteNotFound,
    ReadOnlyNote,
    StaleVersion,
)
from ..kinds import NoteSource
from ..notes import NewNote, Note, NoteVersion
from ..overview import Overview
from ..people import user_id_of
from ..search import KEY_QUERY_RE, MAX_QUERY_CHARS, SearchResult, meaning_floor, search_notes
from ..stores.base import BaseStore
from ..stores.values import Guarded, Room, UnpinnedOnly

T = TypeVar("T")

#: What ``update_note(valid_until=...)`` is when left out: the note keeps its own end.
UNSET: Any = object()

#: The id a new note is measured with before it has one: as long as any real id.
_UNKNOWN_ID = 10**9


def _not_pinned(note: Note) -> None:
    """The agent's delete: a note the person pinned is theirs to delete, not the agent's."""
    if note.pinned:
        raise ReadOnlyNote.for_pinned(note.id)


def _pinnable(notes: Sequence[NewNote], source: str) -> Sequence[NewNote]:
    """``notes``, unless ``source`` is the agent, which never pins or unpins."""
    if source == NoteSource.AGENT:
        raise InvalidNote(
            gettext(
                "pinned cannot be set by the agent: only the person pins or unpins a note. "
                "Leave pinned out."
            ),
            code=ErrorCode.PINNED_BY_AGENT,
        )
    return notes


class _KeepUntil(Exception):
    """An update that keeps ``valid_until`` met a note with another one: write again with it."""

    def __init__(self, valid_until: Any) -> None:
        super().__init__("write again")
        self.valid_until = valid_until


class NoteMemory:
    """The notes of the people an agent talks to, on one store (a
    :class:`~agent_memory.stores.base.BaseStore`); ``user`` is a user instance or its primary
    key everywhere."""

    _store: BaseStore

    @property
    def store(self) -> Any:
        """The store in use."""
        return self._store

    @property
    def limits(self) -> Limits:
        """The limits in force now (read from settings on every access)."""
        return memory_settings.limits

    # --- reading --------------------------------------------------------------------------

    def notes(self, user: Any) -> list[Note]:
        """The person's notes, most recently changed first."""
        notes: list[Note] = self._store.list_notes(user_id_of(user))
        return notes

    def note(self, user: Any, note_id: Any) -> Note:
        """One of the person's notes by its id (``12`` or ``"memory:12"``); ``NoteNotFound`` if
        the person has no such note."""
        number = rules.clean_id(note_id)
        found = self._one(user_id_of(user), number)
        if found is None:
            raise NoteNotFound.for_id(number)
        return found

    def _one(self, user_id: Any, number: int) -> Note | None:
        """The person's note ``number``, read alone, or ``None``."""
        found = self._store.note_listing(user_id).read([number])
        return found[0] if found else None

    def overview(self, user: Any) -> Overview:
        """The person's notes with their counts against the limits, and which of them the
        agent's block leaves out (see :class:`~agent_memory.overview.Overview`)."""
        return self.overview_of(self.notes(user))

    def overview_of(self, notes: Sequence[Note]) -> Overview:
        """:meth:`overview` for notes already read, without reading again."""
        blocks = prompt.blocks(notes, self.limits.max_block_chars)
        hidden = frozenset(block.key for block in blocks if block.hidden)
        return Overview(tuple(notes), hidden, self.limits)

    def search(self, user: Any, query: Any) -> SearchResult:
        """Notes matching ``query`` by word stems and by meaning, best first.

        ``total`` counts every note either side found relevant. With ``EMBEDDINGS=False``, or
        while the embedding backend fails (logged), search is by word stems only.
        """
        if not isinstance(query, str) or not query.strip():
            raise InvalidNote(
                gettext("query must be non-empty text: words to look for, or memory:<id>.")
            )
        if len(query) > MAX_QUERY_CHARS:
            raise InvalidNote(
                gettext(
                    "query is {length} characters long; search with a few words (at most {max} "
                    "characters)."
                ).format(length=len(query), max=MAX_QUERY_CHARS)
            )
        user_id = user_id_of(user)
        if KEY_QUERY_RE.match(query):
            return search_notes(self._store.list_notes(user_id), query, self.limits.search_limit)
        options = (embeddings.configured() or {}).get("OPTIONS")
        floor = meaning_floor(embeddings.get_embedder(), query, options)
        notes, _, similarities = embeddings.notes_and_similarities(
            self._store, user_id, query, floor.weights
        )
        return search_notes(
            notes, query, self.limits.search_limit, similarities=similarities, floor=floor.cosine
        )

    # --- writing --------------------------------------------------------------------------

    def create_notes(
        self,
        user: Any,
        notes: Sequence[Mapping[str, Any]],
        *,
        source: str = NoteSource.AGENT,
        origin: str = "",
        pinned: bool = False,
    ) -> list[Note]:
        """Add 1 to ``MAX_BATCH`` notes (``{"categories", "content"}``), all or none.

        ``origin``: where they were saved, as the host names it (e.g. ``chat:42``). ``pinned``:
        the person's standing rules (not with ``source="agent"``), which the agent reads but
        cannot change; together pinned notes take at most half of ``MAX_BLOCK_CHARS``."""
        user_id = user_id_of(user)
        limits = self.limits
        cleaned = rules.clean_batch(notes, limits, source, origin)
        cleaned = rules.spelled_like(cleaned, self._store.category_names(user_id))
        if pinned:
            cleaned = [replace(note, pinned=True) for note in _pinnable(cleaned, source)]

        def check(existing: rules.Notes) -> None:
            rules.check_create(existing, cleaned, limits)
            if pinned:
                self._check_pinned_room(user_id, cleaned)

        # No vector is computed here: the first search (or ``memory_embed``) embeds the notes
        # without one, so a write costs no embedding and no backend runs under the lock.
        # The check with its figures, so a store may test them as it writes (see Room).
        guarded = Guarded(check, Room(limits.max_notes, limits.max_total_chars))
        created = self._purging_on_refusal(
            user, lambda: list(self._store.insert_notes_checked(user_id, cleaned, guarded))
        )
        signals.saved(self, user_id, created)
        return created

    def update_note(
        self,
        user: Any,
        note_id: Any,
        version: Any,
        categories: Any,
        content: Any,
        *,
        source: str = NoteSource.AGENT,
        origin: str = "",
        pinned: bool | None = None,
        valid_until: Any = UNSET,
    ) -> Note:
        """Replace a note's categories and text, if it is still at ``version``; ``origin``
        says where (as for :meth:`create_notes`; an edit without one clears it).

        ``pinned``: pin or unpin it (``None`` keeps it as it is); only the person and admin
        pin. A pinned note is the person's: with ``source="agent"`` its update is
        :class:`~agent_memory.errors.ReadOnlyNote` (kind ``read_only``).

        ``valid_until``: left out, the note keeps its own; ``None`` clears it; else the new end
        (see :func:`~agent_memory.rules.clean_valid_until`). The note's previous version is kept
        in its :meth:`history`."""
        user_id = user_id_of(user)
        number, expected = rules.clean_id(note_id), rules.clean_version(version)
        where = rules.clean_origin(origin)
        keep = valid_until is UNSET
        until = None if keep else rules.clean_valid_until(valid_until)
        cleaned = replace(
            rules.clean_note(categories, content, source), origin=where, valid_until=until
        )
        if pinned is not None:
            (cleaned,) = [replace(note, pinned=pinned) for note in _pinnable([cleaned], source)]
        # Spelled like the person's other notes (its own categories may change their case).
        (cleaned,) = rules.spelled_like([cleaned], self._store.category_names(user_id, number))
        limits = self.limits

        def check(existing: rules.Notes, current: Note) -> None:
            if current.pinned and source == NoteSource.AGENT:
                raise ReadOnlyNote.for_pinned(current.id)
            if keep and current.valid_until != cleaned.valid_until:
                raise _KeepUntil(current.valid_until)
            rules.check_update(existing, current, cleaned, limits)
            if current.pinned if cleaned.pinned is None else cleaned.pinned:
                self._check_pinned_room(user_id, [cleaned], replaces=current)

        room = Room(limits.max_notes, limits.max_total_chars, same_valid_until=keep)

        def write(new: NewNote) -> Note:
            guarded = Guarded(check, room)
            return self._store.update_note_checked(user_id, number, expected, new, guarded)

        # Most notes have no end, so the write assumes none; a note with one is written again
        # with its own (the check sees the note under the lock; nothing was kept the first time).
        for _attempt in range(5):
            try:
                # The old vector stays until the next search sees that its text digest no
                # longer matches, and embeds the new text then (as for :meth:`create_notes`).
                note = self._purging_on_refusal(user, partial(write, cleaned))
            except _KeepUntil as kept:
                cleaned = replace(cleaned, valid_until=kept.valid_until)
                continue
            signals.saved(self, user_id, [note])
            return note
        raise StaleVersion.for_note(number, expected, expected + 1)

    def delete_note(
        self, user: Any, note_id: Any, version: Any, *, source: str = NoteSource.AGENT
    ) -> int:
        """Delete a note if it is still at ``version``; return its id.

        ``source``: who deletes it; a note the person pinned is not the agent's to delete
        (:class:`~agent_memory.errors.ReadOnlyNote`), so the person's and admin's paths say
        ``source="person"`` or ``"admin"``."""
        user_id = user_id_of(user)
        number, expected = rules.clean_id(note_id), rules.clean_version(version)
        if source == NoteSource.AGENT:
            # Checked under the person's lock; a store that can tell a pinned note in the
            # statement that deletes (DjangoStore on PostgreSQL) reads the note only if it is.
            check = UnpinnedOnly(_not_pinned)
            self._store.delete_note_checked(user_id, number, expected, check)
        else:
            self._store.delete_note(user_id, number, expected)
        signals.deleted(self, user_id, [number], signals.DeleteReason.DELETED)
        return number

    def clear(self, user: Any) -> int:
        """Erase the person's whole memory; return how many notes were deleted."""
        user_id = user_id_of(user)
        self.purge_expired(user)
        # The ids alone, for the signal (a store with a database reads two columns).
        ids = [note_id for note_id, _version in self._store.note_listing(user_id).versions]
        count = int(self._store.clear_notes(user_id))
        signals.deleted(self, user_id, ids, signals.DeleteReason.ERASED)
        return count

    def history(self, user: Any, note_id: Any) -> list[NoteVersion]:
        """The note's earlier versions, newest first (the last ten); ``NoteNotFound`` for a
        missing or foreign note."""
        return list(self._store.history(user_id_of(user), rules.clean_id(note_id)))

    def _purging_on_refusal(self, user: Any, write: Callable[[], T]) -> T:
        """``write()``; if it is refused for room or as a duplicate while notes past their
        ``valid_until`` still count, those are purged (like any delete) and it runs once more.
        Such notes are gone for every reader already; the sweep purges them within the hour."""
        try:
            return write()
        except (LimitReached, DuplicateNote):
            if not self.purge_expired(user):
                raise
        return write()

    def purge_expired(self, user: Any = None) -> int:
        """Delete the notes whose ``valid_until`` has passed (the person's, or everyone's) like
        any delete: their text leaves every copy and ``note_deleted`` is sent with reason
        ``expired``. Readers never see such notes anyway; the sweep and ``memory_optimize`` call
        this so nothing depends on a read happening. Returns how many notes were deleted."""
        where = None if user is None else user_id_of(user)
        purged = self._store.purge_expired(timezone.now(), where)
        for user_id, ids in purged.items():
            signals.deleted(self, user_id, ids, signals.DeleteReason.EXPIRED)
        return sum(len(ids) for ids in purged.values())

    # --- the person's controls: pins and the memory switch ---------------------------------

    def set_pinned(
        self,
        user: Any,
        note_id: Any,
        version: Any,
        pinned: bool,
        *,
        source: str = NoteSource.PERSON,
    ) -> Note:
        """Pin or unpin one of the person's notes at ``version`` (its text stays; the version
        goes up). Pinning past half of ``MAX_BLOCK_CHARS`` is ``LimitReached``."""
        if not isinstance(pinned, bool):
            raise InvalidNote(gettext("pinned must be true or false."), code=ErrorCode.PINNED_SHAPE)
        current = self.note(user, note_id)
        return self.update_note(
            user,
            current.id,
            version,
            current.categories,
            current.content,
            source=source,
            origin=current.origin,
            pinned=pinned,
        )

    def _check_pinned_room(
        self, user_id: Any, notes: Sequence[NewNote], replaces: Note | None = None
    ) -> None:
        """Inside a write's check: the person's pinned notes with ``notes`` (replacing
        ``replaces``) fit in half of ``MAX_BLOCK_CHARS``.

        The store may already show this write's rows in its transaction: ``replaces`` is left
        out by id, and a new note by its categories and text (which no other note can share,
        the duplicate check has just made sure)."""
        now = timezone.now()
        keys = {
            (rules.category_keys(note.categories), rules.text_key(note.content)) for note in notes
        }
        saved = [
            note
            for note in self._store.list_notes(user_id)
            if note.pinned
            and (replaces is None or note.id != replaces.id)
            and (
                replaces is not None
                or (rules.category_keys(note.categories), rules.text_key(note.content)) not in keys
            )
        ]
        planned = [
            Note(
                id=replaces.id if replaces else _UNKNOWN_ID,
                user_id=user_id,
                categories=tuple(note.categories),
                content=note.content,
                version=replaces.version + 1 if replaces else 1,
                source=note.source,
                created_at=now,
                updated_at=now,
                pinned=True,
            )
            for note in notes
        ]
        prompt.check_pinned_room([*saved, *planned], self.limits.max_block_chars)

    def enabled(self, user: Any) -> bool:
        """Whether the person's memory is on (default): off, the agent neither sees nor saves
        notes, and the optimizer leaves them alone; the notes stay."""
        return bool(self._store.memory_enabled(user_id_of(user)))

    def set_enabled(self, user: Any, on: bool) -> None:
        """Turn the person's memory on or off (``on`` must be a bool)."""
        if not isinstance(on, bool):
            raise InvalidNote(
                gettext("enabled must be true or false."), code=ErrorCode.ENABLED_SHAPE
            )
        user_id = user_id_of(user)
        self._store.set_memory_enabled(user_id, on)
        signals.send_after_commit(signals.memory_switched, self, user_id=user_id, enabled=on)

    def clear_origin(self, user: Any, origin: str) -> int:
        """Forget ``origin`` (e.g. ``chat:42`` when that chat is deleted) on the person's notes;
        the notes stay. Returns how many notes it was cleared on."""
        if not origin:
            return 0
        return int(self._store.clear_origin(user_id_of(user), origin))
