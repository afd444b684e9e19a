"""``DjangoStore``: notes in the app's tables through Django's ORM (SQLite, PostgreSQL, …).

A :class:`~agent_memory.stores.base.BaseStore` written in three parts:
:class:`~agent_memory.stores.orm_notes.DjangoNotes` (the notes and their checked writes),
:class:`~agent_memory.stores.orm_vectors.DjangoVectors` (their vectors) and
:class:`~agent_memory.stores.orm_merges.DjangoMerges` (the storage steps of the merges and the
optimizer state, in place of the base's in-process ones).
"""

from __future__ import annotations

from contextlib import AbstractContextManager

from .orm_merges import DjangoMerges
from .orm_notes import DjangoNotes
from .orm_vectors import DjangoVectors
from .slots import database_slot


class DjangoStore(DjangoMerges, DjangoVectors, DjangoNotes):
    """The default store: notes, merges and the optimizer state in the app's tables, every
    write under the person's lock (a transaction-scoped advisory lock on PostgreSQL).

    ``using`` picks a database alias (default: the router's choice for writes); ``policy``, the
    merge policy (default: :class:`~agent_memory.stores.policy.MergePolicy`).
    """

    def import_slot(self, slots: int) -> AbstractContextManager[bool]:
        """One of ``slots`` places for an import, shared by every process on the store's
        database (:mod:`~agent_memory.stores.slots`): PostgreSQL advisory locks, lock files
        beside a SQLite file."""
        return database_slot(self.using, slots)
