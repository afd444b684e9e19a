"""Import slots: a bound on how many imports a site runs at once.

An import is the largest request the app serves (a body of up to 1 MB, every note checked and
scanned for secrets), and a sync web server has a few workers: clients importing back to back
could hold every worker, and another person's read would wait for one. So an import first takes
one of ``MAX_CONCURRENT_IMPORTS`` slots, and is refused at once (``429``) when none is free.

Each slot is a lock that the process holding it drops when it ends, however it ends:

- PostgreSQL (every server of a site shares it): session advisory locks
  ``pg_try_advisory_lock(namespace, slot)``, released when the import ends, or with the
  connection if the process dies;
- SQLite (one machine): ``flock`` on a lock file per slot beside the database file, released
  when the file is closed, or by the kernel if the process dies;
- anything else (an in-memory SQLite database, another database, a store without one, a
  platform without ``flock``): a count kept in this process.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Hashable, Iterator
from contextlib import AbstractContextManager, contextmanager

from django.db import DatabaseError, connections

try:
    import fcntl
except ImportError:  # not on POSIX: counted per process
    fcntl = None  # type: ignore[assignment]

logger = logging.getLogger("agent_memory.stores")

#: First key of the two-key advisory locks of the slots: apart from the per-person write locks
#: (:data:`agent_memory.locking.ADVISORY_NAMESPACE`) and from the host's own locks.
SLOT_NAMESPACE = 0x696D70  # "imp"

__all__ = ["SLOT_NAMESPACE", "database_slot", "file_slot", "process_slot"]


_taken: dict[Hashable, int] = {}
_taken_guard = threading.Lock()


@contextmanager
def process_slot(key: Hashable, slots: int) -> Iterator[bool]:
    """One of ``slots`` places counted under ``key`` in this process: yields whether one was
    free, held until the block ends."""
    with _taken_guard:
        taken = _taken.get(key, 0)
        free = taken < slots
        if free:
            _taken[key] = taken + 1
    try:
        yield free
    finally:
        if free:
            with _taken_guard:
                _taken[key] -= 1
                if not _taken[key]:
                    del _taken[key]


def database_slot(using: str, slots: int) -> AbstractContextManager[bool]:
    """One of ``slots`` places shared by every process using the database ``using``."""
    connection = connections[using]
    if connection.vendor == "postgresql":
        return advisory_slot(using, slots)
    if connection.vendor == "sqlite" and fcntl is not None:
        name = str(connection.settings_dict["NAME"])
        if not (name.startswith(("file:", ":memory:")) or name == ""):
            return file_slot(name, slots)
    return process_slot(("database", using), slots)


@contextmanager
def advisory_slot(using: str, slots: int) -> Iterator[bool]:
    """A free one of ``slots`` session advisory locks on PostgreSQL, tried in turn."""
    connection = connections[using]
    held = None
    with connection.cursor() as cursor:
        for slot in range(slots):
            cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [SLOT_NAMESPACE, slot])
            if cursor.fetchone()[0]:
                held = slot
                break
    try:
        yield held is not None
    finally:
        if held is not None:
            _unlock(using, held)


def _unlock(using: str, slot: int) -> None:
    connection = connections[using]
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [SLOT_NAMESPACE, slot])
    except DatabaseError:
        # The session holds the lock until it ends: end it (the connection is broken, or its
        # transaction failed), so the slot is not kept by an idle connection.
        logger.warning("An import slot could not be released; closing the connection.")
        connection.close()


@contextmanager
def file_slot(database: str, slots: int) -> Iterator[bool]:
    """A free one of ``slots`` lock files beside the SQLite file ``database``, tried in turn."""
    for slot in range(slots):
        path = f"{database}-import-{slot}.lock"
        try:
            # Read-only is enough to lock, and works on a file another user created.
            handle = os.open(path, os.O_RDONLY | os.O_CREAT, 0o644)
        except OSError:
            logger.warning(
                "No lock file beside the SQLite database: import slots are counted per process."
            )
            with process_slot(("file", database), slots) as free:
                yield free
            return
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(handle)
            continue
        try:
            yield True
        finally:
            os.close(handle)  # closing the file releases its lock
        return
    yield False
