"""Export and import through the front door: the person's memory as a file, and back.

:class:`TransferMemory` reads the file with :mod:`~agent_memory.transfer`, plans it against the
notes saved, and creates the planned notes in one checked write under the person's lock.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from django.utils import timezone
from django.utils.translation import gettext

from .. import rules, signals, transfer
from ..conf import memory_settings
from ..errors import ErrorCode, StaleVersion, TooManyImports
from ..kinds import NoteSource
from ..people import user_id_of
from ..transfer import ImportPlan, ImportResult
from .notes import NoteMemory


class _Replan(Exception):
    """The notes changed between planning an import and taking the lock: plan again."""

    def __init__(self, plan: ImportPlan) -> None:
        super().__init__("plan again")
        self.plan = plan


#: The stores (by ``id``) whose import slot the current thread or task holds: an import inside
#: :meth:`TransferMemory.import_slot` takes no second slot.
_holding: ContextVar[frozenset[int]] = ContextVar("agent_memory_import_slots", default=frozenset())


class TransferMemory(NoteMemory):
    """The export and import members of :class:`~agent_memory.LongTermMemory`."""

    def export(self, user: Any) -> dict[str, Any]:
        """The person's memory as a versioned, JSON-serialisable document (notes with
        categories, content, source and dates), which :meth:`import_notes` reads back."""
        return transfer.export_document(self.notes(user), timezone.now())

    @contextmanager
    def import_slot(self) -> Iterator[None]:
        """Hold one of the site's ``MAX_CONCURRENT_IMPORTS`` import slots for the block, or
        raise :class:`~agent_memory.errors.TooManyImports` (kind ``busy``) at once when every
        slot is taken. :meth:`import_notes` takes one itself; a view takes it before it reads
        the body, so a refused import costs next to nothing. Inside the block, an import takes
        no second slot."""
        key, held = id(self._store), _holding.get()
        if key in held:
            yield
            return
        slots = memory_settings.MAX_CONCURRENT_IMPORTS
        with self._store.import_slot(slots) as free:
            if not free:
                raise TooManyImports.for_slots(slots)
            token = _holding.set(held | {key})
            try:
                yield
            finally:
                _holding.reset(token)

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
        when it is valid and not in the future. It runs in one of the site's import slots
        (:meth:`import_slot`): :class:`~agent_memory.errors.TooManyImports` when none is free.
        """
        with self.import_slot():
            return self._import(user, data, categories, source)

    def _import(
        self, user: Any, data: Any, categories: Sequence[str] | None, source: str
    ) -> ImportResult:
        user_id = user_id_of(user)
        limits = self.limits
        items = transfer.import_items(data, categories)
        self.purge_expired(user)
        plan = ImportPlan.of(items, self._store.list_notes(user_id), limits, source)
        # The plan depends on the notes saved when the lock is held; if they changed since it
        # was made, make it again (the check raises before anything is written).
        for _attempt in range(5):

            def check(existing: rules.Notes, plan: ImportPlan = plan) -> None:
                fresh = plan.against(existing)
                if fresh.planned != plan.planned:
                    raise _Replan(fresh)
                plan.check_room(existing, limits)
                pinned = [note for note in plan.planned if note.pinned]
                if pinned:
                    self._check_pinned_room(user_id, pinned)

            try:
                created = self._store.insert_notes_checked(user_id, plan.planned, check)
            except _Replan as replan:
                plan = replan.plan
                continue
            signals.saved(self, user_id, created)
            return ImportResult(created=list(created), skipped=plan.skipped)
        raise StaleVersion(
            gettext("Memory kept changing during the import; nothing was imported. Try again."),
            code=ErrorCode.IMPORT_BUSY,
        )
