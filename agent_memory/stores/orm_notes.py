"""The notes side of :class:`~agent_memory.stores.orm.DjangoStore`: the ``MemoryNote`` table,
its checked writes under the person's lock (one batch of statements on PostgreSQL), the counts
kept in the lock row, and the notes' vectors."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import IntegrityError, connections, router, transaction
from django.db.models import F, Q
from django.db.models.functions import Length
from django.db.models.sql import InsertQuery, UpdateQuery
from django.utils import timezone

from ..embeddings import StoredVector
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
from ..models import MemoryNote, MemoryNoteVersion, MemoryUserLock, NoteVector
from ..notes import MAX_VERSIONS, NewNote, Note, NoteVersion
from ..rules import text_digest
from .base import CreateCheck, MergePolicy, NoteListing, StoreBase, UpdateCheck, at_version

try:
    from django.db.backends.postgresql.psycopg_any import is_psycopg3
except ImportError:  # no PostgreSQL driver installed
    is_psycopg3 = False


def _first(rows: list[Any]) -> Any:
    return rows[0] if rows else None


#: SQL that Django's compilers built, by statement shape (see :meth:`DjangoNotes._reuse`).
_BUILT: dict[tuple[Any, ...], tuple[str, Any]] = {}


def _plain(value: Any) -> Any:
    """A parameter without its driver wrapper (a JSON value's ``Jsonb(obj)``), to compare."""
    return getattr(value, "obj", value)


def _vector_row(note_id: Any, vector: StoredVector, now: datetime) -> NoteVector:
    return NoteVector(
        note_id=note_id,
        model=vector.model,
        digest=vector.digest,
        vector=vector.vector,
        updated_at=now,
    )


def to_note(row: MemoryNote) -> Note:
    return Note(
        id=row.pk,
        user_id=row.user_id,
        categories=tuple(row.categories),
        content=row.content,
        version=row.version,
        source=row.source,
        created_at=row.created_at,
        updated_at=row.updated_at,
        origin=row.origin,
        pinned=row.pinned,
        created_by=row.created_by,
        valid_until=row.valid_until,
    )


def note_of_values(values: Sequence[Any]) -> Note:
    """The note of one row read as :data:`NOTE_FIELDS`."""
    pk, user, categories, content, version, source, created, updated, origin = values[:9]
    pinned, created_by, valid_until = values[9:12]
    return Note(
        id=pk,
        user_id=user,
        categories=tuple(categories),
        content=content,
        version=version,
        source=source,
        created_at=created,
        updated_at=updated,
        origin=origin,
        pinned=pinned,
        created_by=created_by,
        valid_until=valid_until,
    )


def _live(rows: Any, now: datetime) -> Any:
    """``rows`` without the notes whose ``valid_until`` has passed by ``now``."""
    return rows.filter(Q(valid_until__isnull=True) | Q(valid_until__gt=now))


@dataclass(frozen=True)
class CountCheck:
    """A person's stored counts against their notes (see :meth:`DjangoStore.check_counts`)."""

    user_id: Any
    stored: Tally | None
    true: Tally
    stale_text_keys: int

    @property
    def drifted(self) -> bool:
        """Whether anything stored was wrong (a person with no notes needs no row)."""
        counts_wrong = self.stored != self.true and not (
            self.stored is None and self.true == Tally(0, 0)
        )
        return counts_wrong or self.stale_text_keys > 0


class StoredNotes:
    """The person's notes as the write checks see them (:class:`~agent_memory.rules.NoteSet`):
    the counts kept in their lock row, and only the rows whose text key matches.

    ``rows()`` gives the person's rows (built only if a lookup needs them). ``found`` are the
    notes already read for the texts whose keys are ``keys`` (read in the same
    round trip as the lock); other texts are looked up when asked, leaving out ``written`` (notes
    this write has already changed in its transaction) but including ``replaced`` (the note an
    update changes, as it was).
    """

    def __init__(
        self,
        rows: Callable[[], Any],
        tally: Tally,
        *,
        found: Sequence[Note] = (),
        keys: frozenset[str] = frozenset(),
        written: frozenset[int] = frozenset(),
        replaced: Note | None = None,
    ) -> None:
        self._rows = rows
        self._tally = tally
        self._found, self._keys = list(found), keys
        self._written, self._replaced = written, replaced

    @property
    def note_count(self) -> int:
        return self._tally.notes

    @property
    def total_chars(self) -> int:
        return self._tally.chars

    def with_texts(self, contents: Sequence[str]) -> list[Note]:
        keys = {text_digest(content) for content in contents}
        if keys <= self._keys:
            return [note for note in self._found if text_digest(note.content) in keys]
        rows = self._rows().filter(text_key__in=sorted(keys)).exclude(pk__in=self._written)
        notes = [to_note(row) for row in rows]
        if self._replaced is not None and text_digest(self._replaced.content) in keys:
            notes.append(self._replaced)
        return notes


#: The highest version a note can have (the column is a 32-bit integer on PostgreSQL).
MAX_VERSION = 2**31 - 1

#: The fields a :class:`~agent_memory.notes.Note` is read from, in order.
NOTE_FIELDS = (
    *("pk", "user_id", "categories", "content"),
    *("version", "source", "created_at", "updated_at", "origin"),
    *("pinned", "created_by", "valid_until"),
)


class DjangoNotes(StoreBase):
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

    # --- PostgreSQL: a checked write in three round trips ----------------------------------
    #
    # BEGIN; then one batch of statements (the advisory lock, the counts, the notes with the
    # same text, the write itself); then COMMIT, or ROLLBACK if the check refuses the write.
    # Under READ COMMITTED every statement of the batch reads as of its own start, so the reads
    # after the lock see everything the lock's previous holder committed.

    def _batches(self) -> bool:
        connection = connections[self.using]
        return (
            connection.vendor == "postgresql"
            and is_psycopg3
            # Several statements in one call need client-side binding (Django's default).
            and not connection.settings_dict.get("OPTIONS", {}).get("server_side_binding")
        )

    def _batch(self, statements: Sequence[tuple[str, Sequence[Any]]]) -> list[list[Any]]:
        """Run ``statements`` in one round trip; the rows each one returned."""
        sql = ";\n".join(statement for statement, _ in statements)
        params = [param for _, values in statements for param in values]
        results: list[list[Any]] = []
        with connections[self.using].cursor() as cursor:
            cursor.execute(sql, params)
            while True:
                results.append(cursor.fetchall() if cursor.description else [])
                if not cursor.nextset():
                    break
        return results

    def _reuse(
        self, shape: tuple[Any, ...], params: list[Any], build: Callable[[], Any]
    ) -> tuple[str, Sequence[Any], Any]:
        """``(sql, params, compiler)`` of a statement that Django's compiler builds once per
        ``shape``: ``build()`` gives ``(sql, params, compiler)``, and later statements of the same
        shape reuse that SQL with their own ``params``. Kept only if the compiler's parameters
        were exactly ``params`` (otherwise the statement is built every time)."""
        connection = connections[self.using]
        key = (self.using, connection.vendor, *shape)
        built = _BUILT.get(key)
        if built is not None:
            return built[0], params, built[1]
        sql, compiled, compiler = build()
        if [_plain(value) for value in compiled] == [_plain(value) for value in params]:
            _BUILT[key] = (sql, compiler)
        return sql, compiled, compiler

    def _prepared(self, model: Any, values: dict[str, Any]) -> list[Any]:
        """``values`` (field name → value) as the compiler passes them to the database."""
        connection = connections[self.using]
        meta = model._meta
        return [
            meta.get_field(name).get_db_prep_save(value, connection=connection)
            for name, value in values.items()
        ]

    def _user_param(self, user_id: Any) -> Any:
        field = MemoryNote._meta.get_field("user")
        return field.get_db_prep_value(
            field.get_prep_value(user_id), connections[self.using], prepared=True
        )

    @contextmanager
    def _transaction(self, statements: Sequence[tuple[str, Sequence[Any]]]) -> Iterator[Any]:
        """A transaction whose first round trip runs ``statements`` (giving their rows, as
        :meth:`_batch`): it commits when the block ends, and rolls back if the block raises.

        Inside an atomic block it is a savepoint of it. Outside, ``BEGIN`` goes in the same batch
        (the driver would send it in a round trip of its own), so the block must open no atomic
        block of its own: it runs plain statements only.
        """
        connection = connections[self.using]
        if connection.in_atomic_block or not connection.get_autocommit():
            with transaction.atomic(using=self.using):
                yield self._batch(statements)
            return
        try:
            yield self._batch([("BEGIN", []), *statements])[1:]
            self._batch([("COMMIT", [])])
        except BaseException:
            try:
                self._batch([("ROLLBACK", [])])
            except Exception:
                # The link is in an unknown state (as Django's atomic does): the next query
                # opens a new one.
                connection.close()
            raise

    def _select_notes(
        self, shape: tuple[Any, ...], params: list[Any], rows: Callable[[], Any]
    ) -> tuple[str, Sequence[Any], Any]:
        """``(sql, params, convert)``: ``convert(fetched rows)`` gives the notes."""

        def build() -> tuple[str, Sequence[Any], Any]:
            compiler = rows().values_list(*NOTE_FIELDS).query.get_compiler(using=self.using)
            return (*compiler.as_sql(), compiler)

        sql, built, compiler = self._reuse(("select", *shape), params, build)

        def convert(fetched: list[Any]) -> list[Note]:
            return [
                note_of_values(values)
                for values in compiler.results_iter(results=[fetched], tuple_expected=True)
            ]

        return sql, built, convert

    def _insert_statement(self, row: MemoryNote) -> tuple[str, Sequence[Any]]:
        meta = MemoryNote._meta
        row.text_key = text_digest(row.content)
        fields = [field for field in meta.local_concrete_fields if field is not meta.auto_field]

        def build() -> tuple[str, Sequence[Any], Any]:
            query = InsertQuery(MemoryNote)
            query.insert_values(fields, [row])
            compiler = query.get_compiler(using=self.using)
            compiler.returning_fields = [meta.pk]
            ((sql, params),) = compiler.as_sql()
            return sql, params, None

        values = {field.name: getattr(row, field.attname) for field in fields}
        sql, params, _ = self._reuse(("insert",), self._prepared(MemoryNote, values), build)
        return sql, params

    def _update_statement(self, rows: Any, values: dict[str, Any]) -> tuple[str, Sequence[Any]]:
        query = rows.query.chain(UpdateQuery)
        query.add_update_values(values)
        sql, params = query.get_compiler(using=self.using).as_sql()
        return sql, params

    def _insert_batched(
        self,
        user_id: Any,
        notes: Sequence[NewNote],
        check: CreateCheck,
    ) -> list[Note]:
        added = (len(notes), sum(len(note.content) for note in notes))
        keys = frozenset(text_digest(note.content) for note in notes)
        select, select_params, convert = self._select_notes(
            ("text", len(keys)),
            [self._user_param(user_id), *sorted(keys)],
            lambda: self._rows(user_id).filter(text_key__in=sorted(keys)),
        )
        now = timezone.now()
        rows = [self._new_row(user_id, note, now) for note in notes]
        writes = [self._insert_statement(row) for row in rows]
        with self._transaction(
            [
                lock_statement(user_id),
                tally_statement(user_id, self.using, params=added),
                (select, select_params),
                *writes,
            ]
        ) as results:
            before = tally_before(user_id, self.using, _first(results[1]), *added)
            ids = results[3:]
            for row, returned in zip(rows, ids, strict=True):
                row.pk = returned[0][0]
            created = [to_note(row) for row in rows]
            check(
                StoredNotes(
                    lambda: self._rows(user_id),
                    before,
                    found=convert(results[2]),
                    keys=keys,
                    written=frozenset(note.id for note in created),
                )
            )
            return created

    def _update_batched(
        self,
        user_id: Any,
        note_id: int,
        version: int,
        note: NewNote,
        check: UpdateCheck,
    ) -> Note:
        key = text_digest(note.content)
        user = self._user_param(user_id)
        select, select_params, convert = self._select_notes(
            ("note or text",),
            [user, note_id, key],
            lambda: self._rows(user_id).filter(Q(pk=note_id) | Q(text_key=key)),
        )

        def target() -> Any:
            return self._rows(user_id).filter(pk=note_id, version=version)

        def build_length() -> tuple[str, Sequence[Any], Any]:
            query = target().annotate(length=Length("content")).values("length").query
            return (*query.get_compiler(using=self.using).as_sql(), None)

        old_length, old_params, _ = self._reuse(("length",), [user, note_id, version], build_length)
        # The characters this edit adds: none if the note is gone or stale (then it is refused).
        growth_sql = f"%s - COALESCE(({old_length}), %s)"
        growth_params = [len(note.content), *old_params, len(note.content)]
        now = timezone.now()
        values = {
            "categories": list(note.categories),
            "content": note.content,
            "text_key": key,
            "source": note.source,
            "origin": note.origin,
            # Not given: the note stays pinned or not, as it is.
            **({} if note.pinned is None else {"pinned": note.pinned}),
            "valid_until": note.valid_until,
        }

        def build_update() -> tuple[str, Sequence[Any], Any]:
            changes = {**values, "version": F("version") + 1, "updated_at": now}
            return (*self._update_statement(target(), changes), None)

        update_sql, update_params, _ = self._reuse(
            ("update", "pinned" in values, note.valid_until is None),
            [
                *self._prepared(MemoryNote, values),
                1,
                *self._prepared(MemoryNote, {"updated_at": now}),
                user,
                note_id,
                version,
            ],
            build_update,
        )
        update = (update_sql, update_params)
        with self._transaction(
            [
                lock_statement(user_id),
                (select, select_params),
                tally_statement(user_id, self.using, chars=growth_sql, params=[0, *growth_params]),
                *self._keep_version_statements(user, note_id, version),
                update,
            ]
        ) as results:
            found = convert(results[1])
            # A note past its valid_until is gone for every writer too.
            mine = (item for item in found if item.id == note_id and not item.expired(now))
            current = at_version(next(mine, None), note_id, version)
            growth = len(note.content) - len(current.content)
            before = tally_before(user_id, self.using, _first(results[2]), 0, growth)
            check(
                StoredNotes(
                    lambda: self._rows(user_id),
                    before,
                    found=found,
                    keys=frozenset([key]),
                    written=frozenset([note_id]),
                    replaced=current,
                ),
                current,
            )
            return current.updated_to(note, now)

    # --- the five note methods -----------------------------------------------------------

    def list_notes(self, user_id: Any) -> list[Note]:
        rows = _live(self._rows(user_id), timezone.now())
        return [to_note(row) for row in rows.order_by("-updated_at", "-id")]

    def note_listing(self, user_id: Any) -> NoteListing:
        """The versions of all the person's notes still valid, pinned ones first (one query of
        two columns); the block then reads in full only the notes it shows."""
        rows = _live(self._rows(user_id), timezone.now())
        # The pinned notes first (the block always shows them), then the others newest first.
        ordered = rows.order_by("-pinned", "-updated_at", "-id")
        versions = list(ordered.values_list("pk", "version"))

        def read(ids: Sequence[int]) -> list[Note]:
            found = {row.pk: to_note(row) for row in rows.filter(pk__in=list(ids))}
            return [found[note_id] for note_id in ids if note_id in found]

        return NoteListing(versions=versions, read=read)

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
        created: list[Note] = []
        for note in notes:
            row = self._new_row(user_id, note, now)
            # One save per row: bulk_create does not return ids on every backend.
            row.save(using=self.using, force_insert=True)
            created.append(to_note(row))
        return created

    def update_note(self, user_id: Any, note_id: int, version: int, note: NewNote) -> Note:
        with self._write_lock(user_id):
            current = self._current(user_id, note_id, version)
            self._count(user_id, 0, len(note.content) - len(current.content))
            return self._update(user_id, current, note)

    def _keep_version_statements(
        self, user: Any, note_id: int, version: int
    ) -> list[tuple[str, Sequence[Any]]]:
        """SQL that keeps the note at ``version`` as an earlier version (nothing if it is gone or
        at another version) and forgets all but the last :data:`MAX_VERSIONS` of them; it runs
        before the update, in its transaction. ``user``: the prepared user id."""
        connection = connections[self.using]
        quote = connection.ops.quote_name
        versions = quote(MemoryNoteVersion._meta.db_table)
        notes = quote(MemoryNote._meta.db_table)
        columns = ", ".join(
            quote(name)
            for name in ("version", "categories", "content", "pinned", "valid_until", "source")
        )
        keep = (
            f"INSERT INTO {versions} ({quote('note_id')}, {quote('user_id')}, {columns}, "
            f"{quote('changed_at')}) SELECT {quote('id')}, {quote('user_id')}, {columns}, "
            f"{quote('updated_at')} FROM {notes} WHERE {quote('id')} = %s AND "
            f"{quote('user_id')} = %s AND {quote('version')} = %s"
        )
        trim = (
            f"DELETE FROM {versions} WHERE {quote('note_id')} = %s AND {quote('user_id')} = %s "
            f"AND {quote('version')} <= %s"
        )
        return [
            (keep, [note_id, user, version]),
            (trim, [note_id, user, version - MAX_VERSIONS]),
        ]

    def _keep_version(self, user_id: Any, current: Note) -> None:
        """Keep ``current`` as an earlier version of its note (inside the write's transaction)."""
        user = self._user_param(user_id)
        with connections[self.using].cursor() as cursor:
            for sql, params in self._keep_version_statements(user, current.id, current.version):
                cursor.execute(sql, params)

    def history(self, user_id: Any, note_id: int) -> list[NoteVersion]:
        """The note's earlier versions, newest first; ``NoteNotFound`` if the person has no such
        note (or it has expired)."""
        if not _live(self._rows(user_id), timezone.now()).filter(pk=note_id).exists():
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
        self._keep_version(user_id, current)
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
        with self._write_lock(user_id):
            current = self._current(user_id, note_id, version)
            self._count(user_id, -1, -len(current.content))
            self._rows(user_id).filter(pk=note_id).delete()
            self._forget(user_id, {note_id: current.content})

    def clear_origin(self, user_id: Any, origin: str) -> int:
        """Forget ``origin`` on the person's notes (the notes stay); return how many changed."""
        return int(self._rows(user_id).filter(origin=origin).update(origin=""))

    def memory_enabled(self, user_id: Any) -> bool:
        """The switch kept in the person's lock row (no row yet: on)."""
        rows = MemoryUserLock.objects.using(self.using).filter(user_id=user_id)
        stored = rows.values_list("memory_enabled", flat=True).first()
        return True if stored is None else bool(stored)

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
        row = _live(self._rows(user_id), timezone.now()).filter(pk=note_id).first()
        return at_version(None if row is None else to_note(row), note_id, version)

    def _raise_missing_or_stale(self, user_id: Any, note_id: int, version: int) -> None:
        current = self._rows(user_id).filter(pk=note_id).values_list("version", flat=True).first()
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
        if self._batches() and notes:
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
        if self._batches() and version <= MAX_VERSION:
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

    # --- vectors for meaning-based search ---------------------------------------------------

    def list_notes_with_vectors(
        self, user_id: Any, *, vectors: bool = True
    ) -> tuple[list[Note], dict[int, StoredVector]]:
        """The person's notes (as :meth:`list_notes`) and their stored vectors, in one query
        (``vectors=False``: the notes alone, the same way).

        Plain rows rather than model instances: search runs this on every call, so it stays
        about as cheap as listing the notes.
        """
        fields = ["pk", "user_id", "categories", "content", "version", "source", "created_at"]
        fields += ["updated_at", "origin", "pinned", "created_by", "valid_until"]
        if vectors:
            fields += ["vector__model", "vector__digest", "vector__vector"]
        live = _live(self._rows(user_id), timezone.now())
        rows = live.order_by("-updated_at", "-id").values_list(*fields)
        notes, kept = [], {}
        for row in rows:
            pk, owner, categories, content, version, source, created, updated, origin = row[:9]
            notes.append(
                Note(
                    *(pk, owner, tuple(categories), content, version, source, created, updated),
                    origin=origin,
                    pinned=row[9],
                    created_by=row[10],
                    valid_until=row[11],
                )
            )
            if vectors and row[12] is not None:
                kept[pk] = StoredVector(row[12], row[13], bytes(row[14]))
        return notes, kept

    def vectors_of(self, user_id: Any, note_ids: Sequence[int]) -> dict[int, StoredVector]:
        """The stored vectors of some of the person's notes (search after a write reads only
        those of the new and changed notes)."""
        rows = NoteVector.objects.using(self.using).filter(
            note__user_id=user_id, note_id__in=list(note_ids)
        )
        return {
            note_id: StoredVector(model, digest, bytes(vector))
            for note_id, model, digest, vector in rows.values_list(
                "note_id", "model", "digest", "vector"
            )
        }

    def save_vectors(self, user_id: Any, vectors: dict[int, StoredVector]) -> None:
        """Keep (or replace) the vectors of the person's notes; notes gone meanwhile are skipped."""
        ids = set(self._rows(user_id).filter(pk__in=list(vectors)).values_list("pk", flat=True))
        now = timezone.now()
        rows = [
            _vector_row(note_id, item, now) for note_id, item in vectors.items() if note_id in ids
        ]
        if not rows:
            return
        try:
            with transaction.atomic(using=self.using):
                NoteVector.objects.using(self.using).bulk_create(
                    rows,
                    update_conflicts=True,
                    unique_fields=["note"],
                    update_fields=["model", "digest", "vector", "updated_at"],
                )
        except IntegrityError:
            pass  # a note was deleted in between: nothing to keep for it
