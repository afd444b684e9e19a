"""The per-user write lock: one writer per person at a time, others never wait for it.

Limits and duplicates are checked and the write is done inside one transaction holding a lock
that only this person's writers contend for:

- PostgreSQL: ``pg_advisory_xact_lock(namespace, user key)``, released at commit or rollback.
  The reads that follow it must see what the previous holder committed, which is what READ
  COMMITTED (PostgreSQL's default) does; under REPEATABLE READ the snapshot would predate the
  lock, so keep the memory database's connection at READ COMMITTED.
- SQLite: the transaction takes the database write lock up front: its first statement is a
  write (to the person's lock row), so it never reads under a shared lock and upgrades later,
  which SQLite would refuse with "database is locked" instead of waiting.
- Anything else: ``SELECT … FOR UPDATE`` on the person's row in ``MemoryUserLock``.

The same row keeps the person's counts (:class:`Tally`): every write adds to them under the lock,
in its own transaction (:func:`add_to_tally`), so the limits are checked without reading every
note. A person without a row yet is counted from their notes when they first write.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, connections, transaction
from django.db.models import Count, F, Sum
from django.db.models.functions import Length

from .models import MemoryNote, MemoryUserLock

#: First key of the two-key advisory lock, so our locks never collide with the host's.
ADVISORY_NAMESPACE = 0x6D656D  # "mem"


def advisory_key(user_id: Any) -> int:
    """A signed 32-bit key for the person: the pk itself when it fits, else a CRC of it."""
    if isinstance(user_id, int) and -(2**31) <= user_id < 2**31:
        return user_id
    digest = zlib.crc32(str(user_id).encode())
    return digest - 2**32 if digest >= 2**31 else digest


@contextmanager
def user_write_lock(user_id: Any, using: str) -> Iterator[None]:
    """A transaction on ``using`` holding the person's write lock for its whole duration."""
    vendor = connections[using].vendor
    with transaction.atomic(using=using):
        if vendor == "postgresql":
            with connections[using].cursor() as cursor:
                cursor.execute(*lock_statement(user_id))
        elif vendor == "sqlite":
            _touch_lock_row(user_id, using)
        else:
            _touch_lock_row(user_id, using)
            MemoryUserLock.objects.using(using).select_for_update().get(user_id=user_id)
        yield


def _touch_lock_row(user_id: Any, using: str) -> None:
    rows = MemoryUserLock.objects.using(using).filter(user_id=user_id)
    if rows.update(writes=F("writes") + 1):
        return
    try:
        with transaction.atomic(using=using):
            tally = recount(user_id, using)
            MemoryUserLock.objects.using(using).create(
                user_id=user_id, writes=1, note_count=tally.notes, total_chars=tally.chars
            )
    except IntegrityError:
        # Another writer created the row first; the update now finds it.
        rows.update(writes=F("writes") + 1)


# --- the person's counts ----------------------------------------------------------------------


@dataclass(frozen=True)
class Tally:
    """How many notes a person has saved and the sum of their texts' lengths."""

    notes: int
    chars: int


def recount(user_id: Any, using: str) -> Tally:
    """The person's counts, counted from their notes."""
    totals = (
        MemoryNote.objects.using(using)
        .filter(user_id=user_id)
        .aggregate(notes=Count("pk"), chars=Sum(Length("content")))
    )
    return Tally(totals["notes"], totals["chars"] or 0)


def stored_tally(user_id: Any, using: str) -> Tally | None:
    """The counts kept in the person's row, or ``None`` if they have no row yet."""
    row = (
        MemoryUserLock.objects.using(using)
        .filter(user_id=user_id)
        .values_list("note_count", "total_chars")
        .first()
    )
    return Tally(*row) if row else None


def lock_key(user_id: Any) -> tuple[int, int]:
    """The two keys of the person's advisory lock on PostgreSQL."""
    return ADVISORY_NAMESPACE, advisory_key(user_id)


def lock_statement(user_id: Any) -> tuple[str, list[Any]]:
    """The PostgreSQL statement that takes the person's advisory lock, with its parameters."""
    return "SELECT pg_advisory_xact_lock(%s, %s)", list(lock_key(user_id))


def tally_statement(
    user_id: Any, using: str, notes: str = "%s", chars: str = "%s", params: Any = ()
) -> tuple[str, list[Any]]:
    """``UPDATE … RETURNING`` that adds ``notes`` and ``chars`` (SQL, with ``params``) to the
    person's counts and returns the new counts (no row: no result)."""
    connection = connections[using]
    quote = connection.ops.quote_name
    meta = MemoryUserLock._meta
    count, total = quote("note_count"), quote("total_chars")
    key = meta.pk.get_db_prep_value(user_id, connection)
    sql = (
        f"UPDATE {quote(meta.db_table)} SET {count} = {count} + {notes}, "
        f"{total} = {total} + {chars} WHERE {quote('user_id')} = %s "
        f"RETURNING {count}, {total}"
    )
    return sql, [*params, key]


def tally_before(user_id: Any, using: str, after: Any, notes: int, chars: int) -> Tally:
    """The counts before a write that added ``notes`` and ``chars``, from ``after`` (the row the
    tally statement returned, or ``None`` if the person had no row yet: then the notes, already
    written, are counted and the row is created)."""
    if after is None:
        after = recount(user_id, using)
        set_tally(user_id, using, after)
        return Tally(after.notes - notes, after.chars - chars)
    return Tally(after[0] - notes, after[1] - chars)


def add_to_tally(user_id: Any, using: str, notes: int, chars: int) -> Tally:
    """Add to the person's counts; return the counts as they were before.

    Call it inside :func:`user_write_lock`, before the write it counts, in the same transaction:
    if the write fails, the counts roll back with it.
    """
    connection = connections[using]
    row = None
    if connection.vendor in ("postgresql", "sqlite"):
        # One statement for the read and the write (both speak UPDATE … RETURNING).
        with connection.cursor() as cursor:
            cursor.execute(*tally_statement(user_id, using, params=[notes, chars]))
            row = cursor.fetchone()
    else:
        rows = MemoryUserLock.objects.using(using).filter(user_id=user_id)
        if rows.update(note_count=F("note_count") + notes, total_chars=F("total_chars") + chars):
            row = rows.values_list("note_count", "total_chars").get()
    if row is not None:
        return Tally(row[0] - notes, row[1] - chars)
    # No row yet (PostgreSQL creates it here, under the advisory lock): count the notes.
    before = recount(user_id, using)
    set_tally(user_id, using, Tally(before.notes + notes, before.chars + chars))
    return before


def set_tally(user_id: Any, using: str, tally: Tally) -> None:
    """Store the person's counts (inside :func:`user_write_lock`: no other writer can create
    their row meanwhile). Plain statements, no savepoint: it also runs in a transaction that a
    batch of statements began."""
    values = {"note_count": tally.notes, "total_chars": tally.chars}
    rows = MemoryUserLock.objects.using(using)
    if not rows.filter(user_id=user_id).update(**values):
        rows.create(user_id=user_id, **values)
