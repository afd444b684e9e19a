"""``LongTermMemory``: the app's front door for code; every read and write goes through it.

It only composes: the store keeps the notes, :mod:`~agent_memory.rules` cleans and checks what
is written, :mod:`~agent_memory.prompt` and :mod:`~agent_memory.tool` speak to the model, and
the :class:`~agent_memory.optimizer.runner.Optimizer` merges. Nothing in the package imports
this module back.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from django.utils import timezone
from django.utils.module_loading import import_string
from django.utils.translation import gettext

from . import embeddings, prompt, rules, signals, tool, transfer
from .conf import Limits, memory_settings
from .errors import (
    ErrorCode,
    InvalidNote,
    MemoryStorageNotSupportedError,
    NoteNotFound,
    ReadOnlyNote,
    StaleVersion,
)
from .kinds import NoteSource
from .names import TOOL_NAME
from .notes import NewNote, Note, NoteVersion
from .optimizer.runner import OptimizationResult, Optimizer
from .overview import Overview, RevertableMerge
from .people import user_id_of
from .prompt import Block, Turn
from .search import KEY_QUERY_RE, MAX_QUERY_CHARS, SearchResult, meaning_floor, search_notes
from .stores.base import (
    MERGE_METHODS,
    NOTE_METHODS,
    StoreBase,
    checked,
    missing_methods,
    supports,
    switch_of,
)
from .transfer import ImportResult

#: The store used when none is given.
DEFAULT_STORE = "agent_memory.stores.orm.DjangoStore"

_UNSET: Any = object()

#: The id a new note is measured with before it has one: as long as any real id.
_UNKNOWN_ID = 10**9


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


class _Replan(Exception):
    """The notes changed between planning an import and taking the lock: plan again."""

    def __init__(self, planned: list[NewNote], skipped: list[dict[str, str]]) -> None:
        super().__init__("plan again")
        self.planned = planned
        self.skipped = skipped


class LongTermMemory:
    """Long-term memory of the people an agent talks to.

    ``store`` keeps the notes (default: :class:`~agent_memory.stores.orm.DjangoStore`).
    ``optimizer``: unset → on when the store supports merges; a dict → on with these options
    over ``AGENT_MEMORY["OPTIMIZER"]`` (the store must support merges); ``False`` → off.
    """

    tool_name = TOOL_NAME
    service_blocks: tuple[str, ...] = prompt.SERVICE_BLOCKS

    def __init__(self, store: Any = None, optimizer: Any = _UNSET) -> None:
        if store is None:
            store = import_string(DEFAULT_STORE)()
        missing = missing_methods(store, NOTE_METHODS)
        if missing:
            raise MemoryStorageNotSupportedError(missing)
        self._store = store
        # Checked writes always: a store without them gets a lock held in this process only.
        self._writes = checked(store)
        self._switch = switch_of(store)
        self._optimizer = Optimizer(store, self._resolve_optimizer(store, optimizer))

    @staticmethod
    def _resolve_optimizer(store: Any, optimizer: Any) -> dict[str, Any] | None:
        can_merge = supports(store, MERGE_METHODS)
        if optimizer is _UNSET or optimizer is None or optimizer is True:
            if optimizer is True and not can_merge:
                raise MemoryStorageNotSupportedError(
                    missing_methods(store, MERGE_METHODS), feature="the optimizer (merges)"
                )
            return {} if can_merge else None
        if optimizer is False:
            return None
        if not isinstance(optimizer, Mapping):
            raise TypeError("optimizer must be a dict of options, True, False or left unset.")
        if not can_merge:
            raise MemoryStorageNotSupportedError(
                missing_methods(store, MERGE_METHODS), feature="the optimizer (merges)"
            )
        return dict(optimizer)

    # --- what the object is made of -----------------------------------------------------

    @property
    def store(self) -> Any:
        """The store in use."""
        return self._store

    @property
    def can_merge(self) -> bool:
        """Whether the store supports merges (the merge addresses answer 404 otherwise)."""
        return self._optimizer.can_merge

    @property
    def optimizer_options(self) -> dict[str, Any] | None:
        """The optimizer's options in force now, or ``None`` when the optimizer is off."""
        return self._optimizer.options

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
        found = next((note for note in self.notes(user) if note.id == number), None)
        if found is None:
            raise NoteNotFound.for_id(number)
        return found

    def overview(self, user: Any) -> Overview:
        """The person's notes with their counts against the limits, and which of them the
        agent's block leaves out (see :class:`~agent_memory.overview.Overview`)."""
        return self.overview_of(self.notes(user))

    def overview_of(self, notes: Sequence[Note]) -> Overview:
        """:meth:`overview` for notes already read, without reading again."""
        hidden = frozenset(block.key for block in self.blocks_of(notes) if block.hidden)
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
        cleaned = rules.spelled_like(cleaned, self._store.list_notes(user_id))
        if pinned:
            cleaned = [replace(note, pinned=True) for note in _pinnable(cleaned, source)]

        def check(existing: rules.Notes) -> None:
            rules.check_create(existing, cleaned, limits)
            if pinned:
                self._check_pinned_room(user_id, cleaned)

        self.purge_expired(user)
        # No vector is computed here: the first search (or ``memory_embed``) embeds the notes
        # without one, so a write costs no embedding and no backend runs under the lock.
        created = list(self._writes.insert_notes_checked(user_id, cleaned, check))
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
        valid_until: Any = _UNSET,
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
        keep = valid_until is _UNSET
        until = None if keep else rules.clean_valid_until(valid_until)
        cleaned = replace(
            rules.clean_note(categories, content, source), origin=where, valid_until=until
        )
        if pinned is not None:
            (cleaned,) = [replace(note, pinned=pinned) for note in _pinnable([cleaned], source)]
        others = [note for note in self._store.list_notes(user_id) if note.id != number]
        (cleaned,) = rules.spelled_like([cleaned], others)
        limits = self.limits

        def check(existing: rules.Notes, current: Note) -> None:
            if current.pinned and source == NoteSource.AGENT:
                raise ReadOnlyNote.for_pinned(current.id)
            if keep and current.valid_until != cleaned.valid_until:
                raise _KeepUntil(current.valid_until)
            rules.check_update(existing, current, cleaned, limits)
            if current.pinned if cleaned.pinned is None else cleaned.pinned:
                self._check_pinned_room(user_id, [cleaned], replaces=current)

        self.purge_expired(user)
        # Most notes have no end, so the write assumes none; a note with one is written again
        # with its own (the check sees the note under the lock; nothing was kept the first time).
        for _attempt in range(5):
            try:
                # The old vector stays until the next search sees that its text digest no
                # longer matches, and embeds the new text then (as for :meth:`create_notes`).
                note = self._writes.update_note_checked(user_id, number, expected, cleaned, check)
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
        self.purge_expired(user)
        if source == NoteSource.AGENT:
            # A pin changes the version, so a note read unpinned at ``expected`` and pinned
            # since is refused by the store as stale.
            current = next((note for note in self.notes(user_id) if note.id == number), None)
            if current is not None and current.version == expected and current.pinned:
                raise ReadOnlyNote.for_pinned(number)
        self._store.delete_note(user_id, number, expected)
        signals.deleted(self, user_id, [number], signals.DeleteReason.DELETED)
        return number

    def clear(self, user: Any) -> int:
        """Erase the person's whole memory; return how many notes were deleted."""
        user_id = user_id_of(user)
        self.purge_expired(user)
        ids = [note.id for note in self._store.list_notes(user_id)]
        count = int(self._store.clear_notes(user_id))
        signals.deleted(self, user_id, ids, signals.DeleteReason.ERASED)
        return count

    def history(self, user: Any, note_id: Any) -> list[NoteVersion]:
        """The note's earlier versions, newest first (the last ten); ``NoteNotFound`` for a
        missing or foreign note."""
        return list(self._writes.history(user_id_of(user), rules.clean_id(note_id)))

    def purge_expired(self, user: Any = None) -> int:
        """Delete the notes whose ``valid_until`` has passed (the person's, or everyone's) like
        any delete: their text leaves every copy and ``note_deleted`` is sent with reason
        ``expired``. Readers never see such notes anyway; the sweep and ``memory_optimize`` call
        this so nothing depends on a read happening. Returns how many notes were deleted."""
        where = None if user is None else user_id_of(user)
        purged = self._writes.purge_expired(timezone.now(), where)
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
        return bool(self._switch.memory_enabled(user_id_of(user)))

    def set_enabled(self, user: Any, on: bool) -> None:
        """Turn the person's memory on or off (``on`` must be a bool)."""
        if not isinstance(on, bool):
            raise InvalidNote(
                gettext("enabled must be true or false."), code=ErrorCode.ENABLED_SHAPE
            )
        user_id = user_id_of(user)
        self._switch.set_memory_enabled(user_id, on)
        signals.send_after_commit(signals.memory_switched, self, user_id=user_id, enabled=on)

    # --- export and import -----------------------------------------------------------------

    def export(self, user: Any) -> dict[str, Any]:
        """The person's memory as a versioned, JSON-serialisable document (notes with
        categories, content, source and dates), which :meth:`import_notes` reads back."""
        return transfer.export_document(self.notes(user), timezone.now())

    def import_notes(
        self,
        user: Any,
        data: Any,
        *,
        categories: Sequence[str] | None = None,
        source: str = NoteSource.IMPORT,
    ) -> ImportResult:
        """Load an :meth:`export` document, a list of ``{"categories", "content"}``, or text
        with one note per line (given ``categories``, default "Imported").

        Every note is checked like a create; a bad one fails the whole import, naming it.
        Notes already saved (or repeated in ``data``) are skipped and listed. All or nothing,
        under the person's lock, within ``MAX_NOTES`` and ``MAX_TOTAL_CHARS``. Every note gets
        ``source`` (``"import"``), whatever the file claims, and keeps the file's ``created_at``
        when it is valid and not in the future.
        """
        user_id = user_id_of(user)
        limits = self.limits
        items = transfer.import_items(data, categories)
        self.purge_expired(user)
        saved = self._store.list_notes(user_id)
        # Too many for the room left: refused before any note is checked (or scanned for secrets).
        transfer.check_import_room(items, saved, limits)
        cleaned = rules.spelled_like(transfer.clean_items(items, source), saved)
        # The plan depends on the notes saved when the lock is held; if they changed since it
        # was made, make it again (the check raises before anything is written).
        planned, skipped = transfer.plan_import(saved, cleaned)
        for _attempt in range(5):

            def check(existing: rules.Notes, planned: list[NewNote] = planned) -> None:
                # Only the saved notes with the same texts can make an imported note a duplicate.
                same = rules.note_set(existing).with_texts([note.content for note in cleaned])
                fresh, _skipped = transfer.plan_import(list(same), cleaned)
                if fresh != planned:
                    raise _Replan(fresh, _skipped)
                rules.check_room(
                    existing, len(planned), sum(len(n.content) for n in planned), limits
                )
                pinned = [note for note in planned if note.pinned]
                if pinned:
                    self._check_pinned_room(user_id, pinned)

            try:
                created = self._writes.insert_notes_checked(user_id, planned, check)
            except _Replan as replan:
                planned, skipped = replan.planned, replan.skipped
                continue
            signals.saved(self, user_id, created)
            return ImportResult(created=list(created), skipped=skipped)
        raise StaleVersion(
            gettext("Memory kept changing during the import; nothing was imported. Try again."),
            code=ErrorCode.IMPORT_BUSY,
        )

    # --- the agent's side: the tool and the prompt ---------------------------------------------

    @property
    def instructions(self) -> str:
        """Constant text for the agent's system prompt: how to use memory."""
        return prompt.instructions()

    def tool_definition(self, format: str = "openai") -> dict[str, Any]:
        """The ``manage_memory`` tool for ``"openai"``, ``"anthropic"`` or ``"json"``."""
        return tool.tool_definition(format, self.limits)

    def tools(
        self,
        app_tools: Sequence[Mapping[str, Any]] = (),
        format: str = "openai",
        *,
        user: Any = None,
        temporary: bool = False,
    ) -> list[Any]:
        """``app_tools`` plus the memory tool; a clash of names raises ToolNameConflictError.

        With ``user`` whose memory is off, or for a ``temporary`` chat, the memory tool is left
        out (the names are checked all the same)."""
        merged = tool.merge_tools(app_tools, self.tool_definition(format), format)
        if temporary or (user is not None and not self.enabled(user)):
            return merged[:-1]
        return merged

    def call_tool(
        self, user: Any, arguments: Any, origin: str = "", *, temporary: bool = False
    ) -> dict[str, Any]:
        """Run one ``manage_memory`` call; failures come back as ``{"error": …}``, never raised.

        ``origin``: where the call happened, as the host names it (e.g. ``chat:42``); stored on
        the notes it writes, so the memory screen can link each note to its chat. In a
        ``temporary`` chat, or with the person's memory off, it answers kind ``disabled``."""
        return tool.call_tool(self, user, arguments, origin or "", temporary=temporary)

    def blocks(self, user: Any) -> list[Block]:
        """One block per note, newest first; those past ``MAX_BLOCK_CHARS`` are hidden."""
        return self.blocks_of(self.notes(user))

    def blocks_of(self, notes: Sequence[Note]) -> list[Block]:
        """:meth:`blocks` for notes already read (e.g. by :meth:`notes`), without reading again."""
        return prompt.blocks(notes, self.limits.max_block_chars)

    def begin_turn(
        self,
        user: Any,
        state: Mapping[str, Any] | None,
        *,
        reason: str | None = None,
        group: bool = False,
        temporary: bool = False,
    ) -> Turn:
        """What memory text to add to this turn's question.

        A ``temporary`` chat, or a person whose memory is off, gets no text (and no note is
        read); the turn after memory is on again gets the full block."""
        store = self._writes
        # A store on StoreBase reads in full only the notes the block has room for.
        read = (
            (lambda: store.note_listing(user_id_of(user)))
            if isinstance(store, StoreBase)
            else (lambda: self.notes(user))
        )
        return prompt.begin_turn(
            read,
            self.limits,
            state,
            reason=reason,
            group=group,
            enabled=(lambda: False) if temporary else (lambda: self.enabled(user)),
        )

    def strip_service_blocks(self, text: str) -> str:
        """Remove ``<agent_memory>`` blocks the model echoed in its answer."""
        return prompt.strip_service_blocks(text)

    # --- the optimizer: merging duplicate notes --------------------------------------------

    def after_turn(self, user: Any, model: str = "default") -> None:
        """Record the person's activity and, if a run is due, enqueue the optimizer; with the
        person's memory off, nothing (a temporary chat does not call it at all)."""
        if self._optimizer.options is None or not self.enabled(user):
            return
        self._optimizer.after_turn(user, model)

    def optimize(
        self, user: Any, model: str = "default", force: bool = False
    ) -> OptimizationResult:
        """Run the optimizer for this person now if due (always with ``force``); skipped while
        their memory is off."""
        if self._optimizer.options is not None and not self.enabled(user):
            return OptimizationResult(None, "skipped", reason="The person turned memory off.")
        return self._optimizer.optimize(user, model=model, force=force)

    def optimizer_state(self, user: Any) -> dict[str, Any]:
        """``{"consecutive_failures", "next_run_at", "last_success_at"}`` for the person."""
        return self._optimizer.state(user)

    def merges(self, user: Any) -> list[RevertableMerge]:
        """The person's merge runs that can still be reverted, newest first."""
        return self._optimizer.merges(user)

    def has_merge(self, user: Any, run_id: int) -> bool:
        """Whether the person has the merge run ``run_id`` and it can still be reverted."""
        return self._optimizer.has_merge(user, run_id)

    def revert_merge(self, user: Any, run_id: Any, group: Any = None) -> list[Note]:
        """Revert one merge run, or only its group number ``group``: the originals come back
        with their ids, and the optimizer never merges them again. Returns the restored notes."""
        return self._optimizer.revert_merge(user, run_id, group)

    def clear_origin(self, user: Any, origin: str) -> int:
        """Forget ``origin`` (e.g. ``chat:42`` when that chat is deleted) on the person's notes;
        the notes stay. Returns how many notes it was cleared on."""
        clear = getattr(self._store, "clear_origin", None)
        if not callable(clear) or not origin:
            return 0
        return int(clear(user_id_of(user), origin))


__all__ = ["TOOL_NAME", "LongTermMemory"]
