"""The per-user write lock (SPEC §9).

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
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.db import IntegrityError, connections, transaction
from django.db.models import F

from .models import MemoryUserLock

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
                cursor.execute(
                    "SELECT pg_advisory_xact_lock(%s, %s)",
                    [ADVISORY_NAMESPACE, advisory_key(user_id)],
                )
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
            MemoryUserLock.objects.using(using).create(user_id=user_id, writes=1)
    except IntegrityError:
        # Another writer created the row first; the update now finds it.
        rows.update(writes=F("writes") + 1)
