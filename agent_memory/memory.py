"""``LongTermMemory``: the app's front door for code (SPEC §3)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from django.utils.translation import gettext

from . import embeddings, rules
from .conf import Limits, memory_settings
from .errors import InvalidNote, MemoryStorageNotSupportedError, StaleVersion
from .notes import NewNote, Note, parse_id, parse_note_id
from .search import KEY_QUERY_RE, MAX_QUERY_CHARS, SearchResult, search_notes
from .stores.base import MERGE_METHODS, NOTE_METHODS, checked, missing_methods, supports

if TYPE_CHECKING:
    from .prompt import Block, Turn
    from .transfer import ImportResult

TOOL_NAME = "manage_memory"

_UNSET: Any = object()


class _Replan(Exception):
    """The notes changed between planning an import and taking the lock: plan again."""

    def __init__(self, planned: list[NewNote], skipped: list[dict[str, str]]) -> None:
        super().__init__("plan again")
        self.planned = planned
        self.skipped = skipped


def user_id_of(user: Any) -> Any:
    """The primary key of ``user``, given a user instance or the key itself."""
    if user is None or isinstance(user, bool):
        raise InvalidNote(gettext("No person given: pass a user instance or its primary key."))
    if getattr(user, "is_anonymous", False) is True:
        raise InvalidNote(
            gettext("The person is not signed in: memory belongs to a signed-in user.")
        )
    if hasattr(user, "_meta") and hasattr(user, "pk"):
        if user.pk is None:
            raise InvalidNote(gettext("The user is not saved yet: save it before using memory."))
        return user.pk
    return user


class LongTermMemory:
    """Long-term memory of the people an agent talks to.

    ``store`` keeps the notes (default: :class:`~agent_memory.stores.orm.DjangoStore`).
    ``optimizer``: unset → on when the store supports merges; a dict → on with these options
    over ``AGENT_MEMORY["OPTIMIZER"]`` (the store must support merges); ``False`` → off.
    """

    tool_name = TOOL_NAME
    service_blocks: tuple[str, ...] = ("agent_memory",)

    def __init__(self, store: Any = None, optimizer: Any = _UNSET) -> None:
        if store is None:
            from .stores.orm import DjangoStore

            store = DjangoStore()
        missing = missing_methods(store, NOTE_METHODS)
        if missing:
            raise MemoryStorageNotSupportedError(missing)
        self._store = store
        # Checked writes always: a store without them gets a lock held in this process only.
        self._writes = checked(store)
        self._optimizer_options = self._resolve_optimizer(store, optimizer)

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
        return supports(self._store, MERGE_METHODS)

    @property
    def optimizer_options(self) -> dict[str, Any] | None:
        """The optimizer's options in force now, or ``None`` when the optimizer is off."""
        if self._optimizer_options is None:
            return None
        configured = memory_settings.OPTIMIZER
        if configured is False:
            return None
        return {**configured, **self._optimizer_options}

    @property
    def limits(self) -> Limits:
        """The limits in force now (read from settings on every access)."""
        return memory_settings.limits

    # --- reading --------------------------------------------------------------------------

    def notes(self, user: Any) -> list[Note]:
        """The person's notes, most recently changed first."""
        return self._store.list_notes(user_id_of(user))

    def search(self, user: Any, query: Any) -> SearchResult:
        """Notes matching ``query`` by word stems and by meaning, best first (SPEC §5).

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
        notes, _, similarities = embeddings.notes_and_similarities(self._store, user_id, query)
        return search_notes(
            notes,
            query,
            self.limits.search_limit,
            similarities=similarities,
            floor=embeddings.similarity_floor(),
        )

    # --- writing --------------------------------------------------------------------------

    def create_notes(
        self,
        user: Any,
        notes: Sequence[Mapping[str, Any]],
        *,
        source: str = "agent",
        origin: str = "",
    ) -> list[Note]:
        """Add 1 to ``MAX_BATCH`` notes (``{"categories", "content"}``), all or none.

        ``origin``: where they were saved, as the host names it (e.g. ``chat:42``)."""
        user_id = user_id_of(user)
        limits = self.limits
        if not isinstance(notes, (list, tuple)):
            raise InvalidNote(
                gettext('notes must be a list of {"categories": [...], "content": "..."}.')
            )
        rules.check_batch_size(len(notes), limits)
        where = clean_origin(origin)
        cleaned = [
            replace(self._clean(item, source, index, len(notes)), origin=where)
            for index, item in enumerate(notes)
        ]
        # Before the lock: a slow or remote embedding backend never holds up other writes.
        vectors = embeddings.prepare_vectors(cleaned)

        def check(existing: rules.Notes) -> None:
            rules.check_create(existing, cleaned, limits)

        created = self._writes.insert_notes_checked(user_id, cleaned, check)
        embeddings.keep_vectors(self._store, user_id, created, vectors)
        return created

    def update_note(
        self,
        user: Any,
        note_id: Any,
        version: Any,
        categories: Any,
        content: Any,
        *,
        source: str = "agent",
        origin: str = "",
    ) -> Note:
        """Replace a note's categories and text, if it is still at ``version``; ``origin``
        says where (as for :meth:`create_notes`; an edit without one clears it)."""
        user_id = user_id_of(user)
        number, expected = clean_id(note_id), clean_version(version)
        where = clean_origin(origin)
        cleaned = replace(rules.clean_note(categories, content, source), origin=where)
        limits = self.limits
        vectors = embeddings.prepare_vectors([cleaned])

        def check(existing: rules.Notes, current: Note) -> None:
            rules.check_update(existing, current, cleaned, limits)

        note = self._writes.update_note_checked(user_id, number, expected, cleaned, check)
        embeddings.keep_vectors(self._store, user_id, [note], vectors)
        return note

    def delete_note(self, user: Any, note_id: Any, version: Any) -> int:
        """Delete a note if it is still at ``version``; return its id."""
        number = clean_id(note_id)
        self._store.delete_note(user_id_of(user), number, clean_version(version))
        return number

    def clear(self, user: Any) -> int:
        """Erase the person's whole memory; return how many notes were deleted."""
        return int(self._store.clear_notes(user_id_of(user)))

    # --- export and import -----------------------------------------------------------------

    def export(self, user: Any) -> dict[str, Any]:
        """The person's memory as a versioned, JSON-serialisable document (notes with
        categories, content, source and dates), which :meth:`import_notes` reads back."""
        from django.utils import timezone

        from .transfer import export_document

        return export_document(self.notes(user), timezone.now())

    def import_notes(
        self,
        user: Any,
        data: Any,
        *,
        categories: Sequence[str] | None = None,
        source: str = "person",
    ) -> ImportResult:
        """Load an :meth:`export` document, a list of ``{"categories", "content"}``, or text
        with one note per line (given ``categories``, default "Imported").

        Every note is checked like a create; a bad one fails the whole import, naming it.
        Notes already saved (or repeated in ``data``) are skipped and listed. All or nothing,
        under the person's lock, within ``MAX_NOTES`` and ``MAX_TOTAL_CHARS``. Notes without a
        ``source`` of their own get ``source``.
        """
        from .transfer import ImportResult, clean_items, import_items, plan_import

        user_id = user_id_of(user)
        limits = self.limits
        cleaned = clean_items(import_items(data, categories), source)
        # The plan depends on the notes saved when the lock is held; if they changed since it
        # was made, make it again (the check raises before anything is written).
        planned, skipped = plan_import(self._store.list_notes(user_id), cleaned)
        for _attempt in range(5):

            def check(existing: rules.Notes, planned: list[NewNote] = planned) -> None:
                # Only the saved notes with the same texts can make an imported note a duplicate.
                same = rules.note_set(existing).with_texts([note.content for note in cleaned])
                fresh, _skipped = plan_import(list(same), cleaned)
                if fresh != planned:
                    raise _Replan(fresh, _skipped)
                rules.check_room(
                    existing, len(planned), sum(len(n.content) for n in planned), limits
                )

            try:
                created = self._writes.insert_notes_checked(user_id, planned, check)
            except _Replan as replan:
                planned, skipped = replan.planned, replan.skipped
                continue
            return ImportResult(created=list(created), skipped=skipped)
        raise StaleVersion(
            gettext("Memory kept changing during the import; nothing was imported. Try again."),
            code="import_busy",
        )

    @staticmethod
    def _clean(item: Any, source: str, index: int, count: int) -> NewNote:
        if not isinstance(item, Mapping):
            raise InvalidNote(
                gettext(
                    'Note {number} of {count} must be an object {{"categories": [...], '
                    '"content": "..."}}.'
                ).format(number=index + 1, count=count)
            )
        try:
            return rules.clean_note(item.get("categories"), item.get("content"), source)
        except InvalidNote as error:
            if count == 1:
                raise
            raise error.in_batch(index + 1, count) from None

    # --- the agent's side (SPEC §5, §6) ---------------------------------------------------

    @property
    def instructions(self) -> str:
        """Constant text for the agent's system prompt: how to use memory."""
        from .prompt import instructions

        return instructions()

    def tool_definition(self, format: str = "openai") -> dict[str, Any]:
        """The ``manage_memory`` tool for ``"openai"``, ``"anthropic"`` or ``"json"``."""
        from .tool import tool_definition

        return tool_definition(format, self.limits)

    def tools(self, app_tools: Sequence[Mapping[str, Any]] = (), format: str = "openai") -> list:
        """``app_tools`` plus the memory tool; a clash of names raises ToolNameConflictError."""
        from .tool import merge_tools

        return merge_tools(app_tools, self.tool_definition(format), format)

    def call_tool(self, user: Any, arguments: Any, origin: str = "") -> dict[str, Any]:
        """Run one ``manage_memory`` call; failures come back as ``{"error": …}``, never raised.

        ``origin``: where the call happened, as the host names it (e.g. ``chat:42``); stored on
        the notes it writes, so the memory screen can link each note to its chat."""
        from .tool import call_tool

        return call_tool(self, user, arguments, origin)

    def blocks(self, user: Any) -> list[Block]:
        """One block per note, newest first; those past ``MAX_BLOCK_CHARS`` are hidden."""
        return self.blocks_of(self.notes(user))

    def blocks_of(self, notes: Sequence[Note]) -> list[Block]:
        """:meth:`blocks` for notes already read (e.g. by :meth:`notes`), without reading again."""
        from .prompt import blocks

        return blocks(notes, self.limits.max_block_chars)

    def begin_turn(
        self,
        user: Any,
        state: Mapping[str, Any] | None,
        *,
        reason: str | None = None,
        group: bool = False,
    ) -> Turn:
        """What memory text to add to this turn's question (SPEC §6)."""
        from .prompt import begin_turn

        return begin_turn(self, user, state, reason=reason, group=group)

    def strip_service_blocks(self, text: str) -> str:
        """Remove ``<agent_memory>`` blocks the model echoed in its answer."""
        from .prompt import strip_service_blocks

        return strip_service_blocks(text)

    # --- the optimizer (SPEC §8) ----------------------------------------------------------

    def after_turn(self, user: Any, model: str = "default") -> None:
        """Record the person's activity and, if a run is due, enqueue the optimizer."""
        from .optimizer.runner import after_turn

        after_turn(self, user, model)

    def optimize(self, user: Any, model: str = "default", force: bool = False) -> Any:
        """Run the optimizer for this person now if due (always with ``force``)."""
        from .optimizer.runner import optimize

        return optimize(self, user, model=model, force=force)

    def optimizer_state(self, user: Any) -> dict[str, Any]:
        """``{"consecutive_failures", "next_run_at", "last_success_at"}`` for the person."""
        from .optimizer.runner import optimizer_state

        return optimizer_state(self, user)

    def merges(self, user: Any) -> list[dict[str, Any]]:
        """The person's merge runs that can still be reverted."""
        from .optimizer.runner import merges

        return merges(self, user)

    def revert_merge(self, user: Any, run_id: Any, group: Any = None) -> Any:
        """Revert one merge run, or only its group number ``group``: the originals come back
        with their ids, and the optimizer never merges them again."""
        from .optimizer.runner import revert_merge

        return revert_merge(self, user, run_id, group)

    def clear_origin(self, user: Any, origin: str) -> int:
        """Forget ``origin`` (e.g. ``chat:42`` when that chat is deleted) on the person's notes;
        the notes stay. Returns how many notes it was cleared on."""
        clear = getattr(self._store, "clear_origin", None)
        if not callable(clear) or not origin:
            return 0
        return int(clear(user_id_of(user), origin))


def clean_id(value: Any) -> int:
    number = parse_note_id(value)
    if number is None:
        raise InvalidNote(
            gettext(
                'id must be a note id such as 12 or "memory:12", as shown in the memory block or '
                "in search results."
            )
        )
    return number


ORIGIN_MAX_CHARS = 200


def clean_origin(value: Any) -> str:
    """The ``origin`` a host passed: a short string such as ``chat:42`` (or ``""``)."""
    if value is None:
        return ""
    if not isinstance(value, str) or len(value.strip()) > ORIGIN_MAX_CHARS:
        raise InvalidNote(
            gettext("origin must be a short text (at most 200 characters), such as chat:42.")
        )
    return value.strip()


def clean_version(value: Any) -> int:
    number = parse_id(value.strip() if isinstance(value, str) else value)
    if number is None:
        raise InvalidNote(
            gettext(
                "version must be the note's current version, a whole number from 1 up, as shown "
                "in the memory block or in search results."
            )
        )
    return number


__all__ = ["TOOL_NAME", "LongTermMemory"]
