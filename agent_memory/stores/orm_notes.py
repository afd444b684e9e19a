"""The notes side of :class:`~agent_memory.stores.orm.DjangoStore`: the ``MemoryNote`` table,
its checked writes under the person's lock (on PostgreSQL one function call, else one batch of
statements, see :mod:`~agent_memory.stores.orm_sql`), the counts kept in the lock row, and the
notes' vectors."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any

from django.db import connections, router, transaction
from django.db.models import F
from django.utils import timezone

from ..errors import NoteNotFound, StaleVersion
from ..locking import (
    Tally,
    add_to_tally,
    lock_statement,
    recount,
    set_tally,
    stored_tally,
    tally_before,
    tally_statement,
    user_write_lock,
)
from ..models import MemoryNote, MemoryNoteVersion, MemoryUserLock
from ..notes import NewNote, Note, NoteVersion
from ..rules import text_digest
from .base import BaseStore
from .orm_rows import NOTE_FIELDS, CountCheck, StoredNotes, live, note_of_values, to_note
from .orm_sql import NoteStatements, Statement, batches_on
from .policy import MergePolicy
from .values import (
    CreateCheck,
    DeleteCheck,
    NoteListing,
    UnpinnedOnly,
    UpdateCheck,
    at_version,
    room_of,
)

__all__ = ["CountCheck", "DjangoNotes", "to_note"]

#: The highest version a note can have (the column is a 32-bit integer on PostgreSQL).
MAX_VERSION = 2**31 - 1


def _first(rows: list[Any]) -> Any:
    return rows[0] if rows else None


def _written(
    user_id: Any,
    note_id: int,
    note: NewNote,
    now: datetime,
    version: int,
    created_at: datetime,
    created_by: str,
) -> Note:
    """The note that writing ``note`` as ``note_id`` at ``version`` at ``now`` made (not pinned
    unless ``note`` pins it), first written at ``created_at`` by ``created_by``."""
    return Note(
        *(note_id, user_id, tuple(note.categories), note.content, version, note.source),
        *(created_at, now, note.origin),
        created_by=created_by,
        pinned=bool(note.pinned),
        valid_until=note.valid_until,
    )


def _created(user_id: Any, note_id: int, note: NewNote, now: datetime) -> Note:
    """The note that inserting ``note`` as ``note_id`` at ``now`` made."""
    return _written(user_id, note_id, note, now, 1, note.created_at or now, note.source)


def _updated(
    user_id: Any,
    note_id: int,
    version: int,
    note: NewNote,
    now: datetime,
    created_at: datetime,
    created_by: str,
) -> Note:
    """The note that updating ``note_id`` at ``version`` to ``note`` at ``now`` made, where it
    was not pinned (a pinned note is not updated that way): first written at ``created_at`` by
    ``created_by``."""
    return _written(user_id, note_id, note, now, version + 1, created_at, created_by)


class DjangoNotes(BaseStore):
    """The five note methods, the checked writes and the counts on the ``MemoryNote`` table.

    Every write runs under the person's lock and adds to their counts in the same transaction,
    so the checks read the counts and the notes with the same text, never every note.

    ``using`` picks a database alias; by default the router's choice for writes, so reads of a
    person's notes for a write never go to a lagging replica.
    """

    #: The notes are in the database, where a django-q2 worker reaches them too: the optimizer
    #: runs as a background task (a store without this runs it in the process of the turn).
    runs_in_workers = True

    def __init__(self, using: str | None = None, *, policy: MergePolicy | None = None) -> None:
        super().__init__(policy=policy)
        self._using = using
        self._sql: dict[str, NoteStatements] = {}

    @property
    def using(self) -> str:
        return self._using or router.db_for_write(MemoryNote) or "default"

    def _rows(self, user_id: Any) -> Any:
        return MemoryNote.objects.using(self.using).filter(user_id=user_id)

    def _count(self, user_id: Any, notes: int, chars: int) -> Tally:
        """Add to the person's counts (under their lock, before the write); the counts before."""
        return add_to_tally(user_id, self.using, notes, chars)

    def _write_lock(self, user_id: Any) -> AbstractContextManager[object]:
        """A transaction holding the person's lock across processes
        (:func:`~agent_memory.locking.user_write_lock`)."""
        return user_write_lock(user_id, self.using)

    # --- PostgreSQL: each checked write in one call, else in one batch (see orm_sql) ---------

    def _statements(self) -> NoteStatements:
        using = self.using
        built = self._sql.get(using)
        if built is None:
            built = self._sql[using] = NoteStatements(using)
        return built

    def _read(self, statement: Statement) -> list[Any]:
        """The rows of one plain read that every tool call makes: on PostgreSQL prepared once
        per connection like the writes' calls (:meth:`NoteStatements.call`), else through
        Django's cursor."""
        if batches_on(self.using):
            return self._statements().call(statement)
        with connections[self.using].cursor() as cursor:
            cursor.execute(*statement)
            return list(cursor.fetchall())

    def _insert_batched(
        self, user_id: Any, notes: Sequence[NewNote], check: CreateCheck
    ) -> list[Note]:
        sql = self._statements()
        user = sql.user(user_id)
        added = [len(notes), sum(len(note.content) for note in notes)]
        digests = [text_digest(note.content) for note in notes]
        keys = frozenset(digests)
        now = timezone.now()
        room = room_of(check)
        fits = len(keys) == len(notes) and not any(note.pinned for note in notes)
        if room is not None and fits and sql.functions:
            # The check's room tested as the notes are written: one statement, and no
            # transaction of Django's around it (the statement is one on its own).
            if len(notes) == 1:
                one = sql.create_note_in_room(user, notes[0], digests[0], now, room)
                ((made,),) = sql.call(one)
                ids = [] if made is None else [made]
            else:
                ((ids,),) = sql.call(sql.create_in_room(user, notes, digests, now, room))
            if ids:
                return [
                    _created(user_id, note_id, note, now)
                    for note_id, note in zip(ids, notes, strict=True)
                ]
        with transaction.atomic(using=self.using):
            _, counts, found, ids = sql.run(
                [
                    lock_statement(user_id),
                    tally_statement(user_id, self.using, params=added),
                    sql.with_keys(user, sorted(keys)),
                    sql.insert(user, notes, now),
                ]
            )
            before = tally_before(user_id, self.using, _first(counts), *added)
            created = [
                _created(user_id, row[0], note, now) for row, note in zip(ids, notes, strict=True)
            ]
            check(
                StoredNotes(
                    lambda: self._rows(user_id),
                    before,
                    found=sql.notes_of(found),
                    keys=keys,
                    written=frozenset(note.id for note in created),
                )
            )
            return created

    def _update_batched(
        self, user_id: Any, note_id: int, version: int, note: NewNote, check: UpdateCheck
    ) -> Note:
        sql = self._statements()
        user = sql.user(user_id)
        key = text_digest(note.content)
        now = timezone.now()
        room = room_of(check)
        if room is not None and not note.pinned and sql.functions:
            # As for a create: the room tested as the note changes, in one statement.
            changed = sql.call(sql.update_in_room(user, note_id, version, note, key, now, room))
            if changed:
                ((created_at, created_by),) = changed
                return _updated(user_id, note_id, version, note, now, created_at, created_by)
        # The characters this edit adds: none if the note is gone or stale (then it is refused).
        growth = f"%s - COALESCE({sql.length_at_version()}, %s)"
        length = len(note.content)
        with transaction.atomic(using=self.using):
            _, found, counts, *_ = sql.run(
                [
                    lock_statement(user_id),
                    sql.note_or_key(user, note_id, key),
                    tally_statement(
                        user_id,
                        self.using,
                        chars=growth,
                        params=[0, length, user, note_id, version, length],
                    ),
                    sql.keep_version(user, note_id, version),
                    sql.update(user, note_id, version, note, now),
                ]
            )
            notes = sql.notes_of(found)
            # A note past its valid_until is gone for every writer too.
            mine = (item for item in notes if item.id == note_id and not item.expired(now))
            current = at_version(next(mine, None), note_id, version)
            growth_chars = length - len(current.content)
            before = tally_before(user_id, self.using, _first(counts), 0, growth_chars)
            check(
                StoredNotes(
                    lambda: self._rows(user_id),
                    before,
                    found=notes,
                    keys=frozenset([key]),
                    written=frozenset([note_id]),
                    replaced=current,
                ),
                current,
            )
            return current.updated_to(note, now)

    def _deleted_alone(self, user_id: Any, note_id: int, version: int, *, unpinned: bool) -> bool:
        """Whether the note was deleted by one statement on its own, as most are: it has no
        copy elsewhere (and with ``unpinned``, it is not pinned)."""
        sql = self._statements()
        if not sql.functions:
            return False
        erased = self.policy.erased_proposals
        now = timezone.now()
        alone = sql.delete_alone(sql.user(user_id), note_id, version, now, erased, unpinned)
        ((gone,),) = sql.call(alone)
        return gone is not None

    def _delete_batched(self, user_id: Any, note_id: int, version: int) -> None:
        if self._deleted_alone(user_id, note_id, version, unpinned=False):
            return
        sql = self._statements()
        user = sql.user(user_id)
        erased = self.policy.erased_proposals
        with transaction.atomic(using=self.using):
            _, gone, copies = sql.run(
                [
                    lock_statement(user_id),
                    sql.delete(user, note_id, version, timezone.now()),
                    sql.copies(user, note_id, erased),
                ]
            )
            if not gone:
                self._raise_missing_or_stale(user_id, note_id, version)
            (content, counted), *_ = gone
            if not counted:  # no counts row yet: count the notes that stay
                set_tally(user_id, self.using, recount(user_id, self.using))
            if copies[0][0]:
                self._forget(user_id, {note_id: content})

    # --- the five note methods -----------------------------------------------------------

    def list_notes(self, user_id: Any) -> list[Note]:
        rows = live(self._rows(user_id), timezone.now()).order_by("-updated_at", "-id")
        return [note_of_values(values) for values in rows.values_list(*NOTE_FIELDS)]

    def note_listing(self, user_id: Any) -> NoteListing:
        """The versions of all the person's notes still valid, pinned ones first (one query of
        two columns); the block then reads in full only the notes it shows."""
        rows = live(self._rows(user_id), timezone.now())
        # The pinned notes first (the block always shows them), then the others newest first.
        ordered = rows.order_by("-pinned", "-updated_at", "-id")
        versions = list(ordered.values_list("pk", "version"))

        def read(ids: Sequence[int]) -> list[Note]:
            chosen = rows.filter(pk__in=list(ids)).values_list(*NOTE_FIELDS)
            found = {note.id: note for note in map(note_of_values, chosen)}
            return [found[note_id] for note_id in ids if note_id in found]

        return NoteListing(versions=versions, read=read)

    def category_names(self, user_id: Any, leave_out: int | None = None) -> list[str]:
        """The category names of the person's notes, each once, most recently used first: one
        query that unnests the names in the database (PostgreSQL, SQLite), so a person with
        hundreds of notes sends back their few names; elsewhere the column of every note."""
        vendor = connections[self.using].vendor
        if vendor in ("postgresql", "sqlite"):
            sql = self._statements()
            statement = sql.category_names(vendor, sql.user(user_id), timezone.now(), leave_out)
            return [name for (name,) in self._read(statement)]
        rows = live(self._rows(user_id), timezone.now())
        if leave_out is not None:
            rows = rows.exclude(pk=leave_out)
        ordered = rows.order_by("-updated_at", "-id").values_list("categories", flat=True)
        return [name for categories in ordered for name in categories]

    def insert_notes(self, user_id: Any, notes: Sequence[NewNote]) -> list[Note]:
        with self._write_lock(user_id):
            self._count(user_id, len(notes), sum(len(note.content) for note in notes))
            return self._insert(user_id, notes)

    @staticmethod
    def _new_row(user_id: Any, note: NewNote, now: datetime) -> MemoryNote:
        return MemoryNote(
            user_id=user_id,
            categories=list(note.categories),
            content=note.content,
            source=note.source,
            created_by=note.source,
            origin=note.origin,
            pinned=bool(note.pinned),
            valid_until=note.valid_until,
            version=1,
            created_at=note.created_at or now,
            updated_at=now,
        )

    def _insert(self, user_id: Any, notes: Sequence[NewNote]) -> list[Note]:
        now = timezone.now()
        rows = [self._new_row(user_id, note, now) for note in notes]
        for row in rows:
            row.text_key = text_digest(row.content)  # what save() sets; bulk_create does not
        if connections[self.using].features.can_return_rows_from_bulk_insert:
            # One statement for all (PostgreSQL, SQLite 3.35+): the ids come back with it.
            MemoryNote.objects.using(self.using).bulk_create(rows)
        else:
            for row in rows:
                row.save(using=self.using, force_insert=True)
        return [to_note(row) for row in rows]

    def update_note(self, user_id: Any, note_id: int, version: int, note: NewNote) -> Note:
        with self._write_lock(user_id):
            current = self._current(user_id, note_id, version)
            self._count(user_id, 0, len(note.content) - len(current.content))
            return self._update(user_id, current, note)

    def _keep_version_row(self, user_id: Any, current: Note) -> None:
        """Keep ``current`` as an earlier version of its note (inside the write's transaction)."""
        sql = self._statements()
        with connections[self.using].cursor() as cursor:
            cursor.execute(*sql.keep_version(sql.user(user_id), current.id, current.version))

    def history(self, user_id: Any, note_id: int) -> list[NoteVersion]:
        """The note's earlier versions, newest first; ``NoteNotFound`` if the person has no such
        note (or it has expired)."""
        if not live(self._rows(user_id), timezone.now()).filter(pk=note_id).exists():
            raise NoteNotFound.for_id(note_id)
        rows = (
            MemoryNoteVersion.objects.using(self.using)
            .filter(user_id=user_id, note_id=note_id)
            .order_by("-version")
        )
        return [
            NoteVersion(
                row.version,
                tuple(row.categories),
                row.content,
                row.pinned,
                row.valid_until,
                row.source,
                row.changed_at,
            )
            for row in rows
        ]

    def purge_expired(self, now: datetime, user_id: Any = None) -> dict[Any, list[int]]:
        """Delete the notes whose ``valid_until`` passed by ``now`` (of everyone, or of the
        person ``user_id``) like any delete, under each person's lock; returns the ids deleted
        per person."""
        expired = MemoryNote.objects.using(self.using).filter(valid_until__lte=now)
        if user_id is not None:
            expired = expired.filter(user_id=user_id)
        people = sorted(set(expired.values_list("user_id", flat=True)))
        purged: dict[Any, list[int]] = {}
        for person in people:
            with self._write_lock(person):
                rows = list(
                    self._rows(person).filter(valid_until__lte=now).values_list("pk", "content")
                )
                if not rows:
                    continue
                self._count(person, -len(rows), -sum(len(content) for _, content in rows))
                self._rows(person).filter(pk__in=[pk for pk, _ in rows]).delete()
                self._forget(person, dict(rows))
            purged[person] = [pk for pk, _ in rows]
        return purged

    def _update(self, user_id: Any, current: Note, note: NewNote) -> Note:
        now = timezone.now()
        self._keep_version_row(user_id, current)
        changed = (
            self._rows(user_id)
            .filter(pk=current.id, version=current.version)
            .update(
                categories=list(note.categories),
                content=note.content,
                text_key=text_digest(note.content),
                source=note.source,
                origin=note.origin,
                **({} if note.pinned is None else {"pinned": note.pinned}),
                valid_until=note.valid_until,
                version=F("version") + 1,
                updated_at=now,
            )
        )
        if not changed:
            self._raise_missing_or_stale(user_id, current.id, current.version)
        return current.updated_to(note, now)

    def delete_note(self, user_id: Any, note_id: int, version: int) -> None:
        if batches_on(self.using) and version <= MAX_VERSION:
            self._delete_batched(user_id, note_id, version)
            return
        with self._write_lock(user_id):
            current = self._current(user_id, note_id, version)
            self._count(user_id, -1, -len(current.content))
            self._rows(user_id).filter(pk=note_id).delete()
            self._forget(user_id, {note_id: current.content})

    def delete_note_checked(
        self, user_id: Any, note_id: int, version: int, check: DeleteCheck
    ) -> None:
        # The agent's delete of a note that is not pinned: one statement, as any delete that
        # fits; a pinned, missing or stale note is read and checked in full.
        fits = isinstance(check, UnpinnedOnly) and version <= MAX_VERSION
        if fits and batches_on(self.using):
            if self._deleted_alone(user_id, note_id, version, unpinned=True):
                return
        super().delete_note_checked(user_id, note_id, version, check)

    def clear_origin(self, user_id: Any, origin: str) -> int:
        """Forget ``origin`` on the person's notes (the notes stay); return how many changed."""
        return int(self._rows(user_id).filter(origin=origin).update(origin=""))

    def memory_enabled(self, user_id: Any) -> bool:
        """The switch kept in the person's lock row (no row yet: on). Asked before every call
        of the agent's tool: one plain statement, which costs a third of the ORM's query (most
        of that is building the query)."""
        sql = self._statements()
        stored = self._read(sql.switch(sql.user(user_id)))
        return True if not stored else bool(stored[0][0])

    def set_memory_enabled(self, user_id: Any, on: bool) -> None:
        # Under the person's lock, so the row (which holds their counts too) is created once.
        with self._write_lock(user_id):
            rows = MemoryUserLock.objects.using(self.using).filter(user_id=user_id)
            if not rows.update(memory_enabled=bool(on)):
                tally = recount(user_id, self.using)
                MemoryUserLock.objects.using(self.using).create(
                    user_id=user_id,
                    memory_enabled=bool(on),
                    note_count=tally.notes,
                    total_chars=tally.chars,
                )

    def clear_notes(self, user_id: Any) -> int:
        # Under the person's lock, so a merge being applied finishes before or after, never
        # half way through the erase.
        with self._write_lock(user_id):
            _, per_model = self._rows(user_id).delete()
            self._erase_merges(user_id)
            set_tally(user_id, self.using, Tally(0, 0))
        # The count includes the notes' vectors, deleted with them: report notes only.
        return int(per_model.get(MemoryNote._meta.label, 0))

    def _current(self, user_id: Any, note_id: int, version: int) -> Note:
        """The note at ``version``, or ``NoteNotFound`` / ``StaleVersion``."""
        row = live(self._rows(user_id), timezone.now()).filter(pk=note_id).first()
        return at_version(None if row is None else to_note(row), note_id, version)

    def _raise_missing_or_stale(self, user_id: Any, note_id: int, version: int) -> None:
        rows = live(self._rows(user_id), timezone.now()).filter(pk=note_id)
        current = rows.values_list("version", flat=True).first()
        if current is None:
            raise NoteNotFound.for_id(note_id)
        raise StaleVersion.for_note(note_id, version, current)

    # --- checked writes: limits that hold across processes -------------------------------

    def insert_notes_checked(
        self,
        user_id: Any,
        notes: Sequence[NewNote],
        check: CreateCheck,
    ) -> list[Note]:
        # Nothing to insert (an import of notes all saved already): no text keys to select by,
        # and an empty ``IN ()`` cannot be compiled into the batch.
        if batches_on(self.using) and notes:
            return self._insert_batched(user_id, notes, check)
        with self._write_lock(user_id):
            # Counted first (one statement reads and adds); a refused write rolls it back.
            before = self._count(user_id, len(notes), sum(len(note.content) for note in notes))
            check(StoredNotes(lambda: self._rows(user_id), before))
            return self._insert(user_id, notes)

    def update_note_checked(
        self,
        user_id: Any,
        note_id: int,
        version: int,
        note: NewNote,
        check: UpdateCheck,
    ) -> Note:
        # A version no row can hold (say 10**30) compiles to no SQL at all: no batch for it.
        if batches_on(self.using) and version <= MAX_VERSION:
            return self._update_batched(user_id, note_id, version, note, check)
        with self._write_lock(user_id):
            current = self._current(user_id, note_id, version)
            before = self._count(user_id, 0, len(note.content) - len(current.content))
            check(StoredNotes(lambda: self._rows(user_id), before), current)
            return self._update(user_id, current, note)

    # --- counts: recount and repair ------------------------------------------------------

    def check_counts(self, user_id: Any, *, repair: bool = False) -> CountCheck:
        """Compare the person's stored counts and text keys with their notes, under their lock;
        with ``repair``, store the true counts and fix every stale text key."""
        with self._write_lock(user_id):
            stored = stored_tally(user_id, self.using)
            true = recount(user_id, self.using)
            stale = {
                pk: text_digest(content)
                for pk, content, key in self._rows(user_id).values_list("pk", "content", "text_key")
                if key != text_digest(content)
            }
            if repair:
                if stored != true:
                    set_tally(user_id, self.using, true)
                for pk, key in stale.items():
                    self._rows(user_id).filter(pk=pk).update(text_key=key)
            return CountCheck(user_id, stored, true, len(stale))
