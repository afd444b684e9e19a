"""Signals that tell the host what happened to a person's memory, so it can purge its own copies
(transcripts, caches, search indexes).

Each is sent once the transaction that made the change has committed (``transaction.on_commit``;
at once when no transaction is open) and carries ids, never note text:

- ``note_saved(user_id, note_id, version, source)``: a note was created or changed;
- ``note_deleted(user_id, note_ids, reason)``: notes are gone, ``reason`` one of ``deleted``,
  ``expired``, ``merged``, ``erased``;
- ``merge_applied(user_id, run_id)`` / ``merge_reverted(user_id, run_id, group)``;
- ``memory_switched(user_id, enabled)``: the person turned memory on or off.

Connect as to any Django signal::

    from agent_memory.signals import note_deleted

    @receiver(note_deleted)
    def forget_in_transcripts(sender, user_id, note_ids, reason, **kwargs): ...

``sender`` is the :class:`~agent_memory.LongTermMemory` (or optimizer) that made the change.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from enum import StrEnum
from typing import Any

from django.db import connections, router, transaction
from django.dispatch import Signal

from . import embeddings, search
from .models import MemoryNote

logger = logging.getLogger("agent_memory")

note_saved = Signal()
note_deleted = Signal()
merge_applied = Signal()
merge_reverted = Signal()
memory_switched = Signal()


class DeleteReason(StrEnum):
    """Why ``note_deleted`` was sent."""

    DELETED = "deleted"
    EXPIRED = "expired"
    MERGED = "merged"
    ERASED = "erased"


def _database() -> str:
    return router.db_for_write(MemoryNote) or "default"


def forget_cached_texts() -> None:
    """Empty this process's caches that are keyed by, or hold words of, note texts (the stems of
    search and the digests of embedded texts), so no deleted note's text stays in them."""
    search.stem.cache_clear()
    search._note_stems.cache_clear()
    embeddings.digest.cache_clear()


def send_after_commit(signal: Signal, sender: Any, **values: Any) -> None:
    """Send ``signal`` with ``values`` once the current transaction commits (at once outside
    one). A receiver that raises is logged; it never undoes or fails the change."""

    def send() -> None:
        for receiver, outcome in signal.send_robust(sender=sender, **values):
            if isinstance(outcome, Exception):
                logger.error(
                    "A receiver of an agent_memory signal failed: %r",
                    receiver,
                    exc_info=(type(outcome), outcome, outcome.__traceback__),
                )

    alias = _database()
    # Outside an atomic block the change is committed already (and a store without a database
    # never opens one): send now, without touching the connection.
    if connections[alias].in_atomic_block:
        transaction.on_commit(send, using=alias)
    else:
        send()


def saved(sender: Any, user_id: Any, notes: Iterable[Any]) -> None:
    """``note_saved`` for each of ``notes`` (:class:`~agent_memory.notes.Note` values)."""
    for note in notes:
        send_after_commit(
            note_saved,
            sender,
            user_id=user_id,
            note_id=note.id,
            version=note.version,
            source=str(note.source),
        )


def deleted(sender: Any, user_id: Any, note_ids: Iterable[int], reason: DeleteReason) -> None:
    """``note_deleted`` for ``note_ids`` (nothing when there are none); in-process caches of
    note text are emptied at once, whatever the transaction does."""
    ids = sorted(note_ids)
    if not ids and reason != DeleteReason.ERASED:
        return
    forget_cached_texts()
    send_after_commit(note_deleted, sender, user_id=user_id, note_ids=ids, reason=str(reason))


__all__ = [
    "DeleteReason",
    "forget_cached_texts",
    "memory_switched",
    "merge_applied",
    "merge_reverted",
    "note_deleted",
    "note_saved",
    "send_after_commit",
]
