"""The checked writes of ``DjangoStore`` on PostgreSQL: a first try of one statement, then, if
that wrote nothing, one batch of statements.

- **Room**: a write whose check comes with its :class:`~agent_memory.stores.values.Room` is
  tried first as one call of a function of the app's (created by its migrations ``0010`` to
  ``0014``): ``agent_memory_create_note_in_room`` for one note
  (:meth:`NoteStatements.create_note_in_room`), ``agent_memory_create_in_room`` for several
  (:meth:`~NoteStatements.create_in_room`), ``agent_memory_update_note_in_room``
  (:meth:`~NoteStatements.update_in_room`) or, for a delete when nothing beside the notes holds
  a copy of the text (and, for the agent's, when the note is not pinned),
  ``agent_memory_delete_alone`` (:meth:`~NoteStatements.delete_alone`).
  Each takes the person's advisory lock, then reads and writes in statements of its own, so
  under READ COMMITTED each one sees what the lock's previous holder committed; each writes
  only if the write fits. Sent outside a transaction, the call is one transaction of its own
  (the lock is released when it ends): one round trip, its values bound by the server
  (:meth:`NoteStatements.call`), so nothing is quoted into the SQL on our side. Nothing written
  means the write may not fit: then it is made in full.
- **In full**: one batch (one ``cursor.execute()`` of several statements) inside Django's
  ``transaction.atomic()`` (``BEGIN``, the batch, ``COMMIT``): the lock, the reads the check
  needs (the counts, the notes with the same text), the write; the check runs on what the batch
  returned, and if it refuses, the atomic block rolls the whole write back.

The SQL of the batches is written here over the app's tables (names quoted by the connection,
values prepared by the model's own fields), once per store and database alias. Several
statements in one call need psycopg 3 with client-side binding (Django's default); elsewhere the
ORM path is used.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any, cast

from django.db import DatabaseError, connections
from django.db.models import Field

from ..locking import lock_key
from ..models import (
    MemoryNote,
    MemoryNoteVersion,
    MemoryUserLock,
    MergedNoteSnapshot,
    MergeRun,
    NoteVector,
)
from ..notes import MAX_VERSIONS, NewNote, Note
from ..rules import text_digest
from .orm_rows import NOTE_FIELDS, note_of_values
from .values import Room

try:
    import psycopg
    from django.db.backends.postgresql.psycopg_any import is_psycopg3
except ImportError:  # no psycopg 3 installed
    is_psycopg3 = False
else:

    class Prepared(psycopg.Cursor):
        """psycopg's cursor that prepares what it runs once per connection, whatever the
        connection's ``prepare_threshold`` (Django sets none, which leaves every other
        statement of the site unprepared, as it was): the call's SQL is parsed and planned the
        first time, and later calls send only its values."""

        def execute(self, query: Any, params: Any = None, **options: Any) -> Any:
            connection = self.connection
            threshold = connection.prepare_threshold
            if threshold is None:
                # Asked for by name, the statement is prepared at any threshold but none.
                connection.prepare_threshold = PREPARE_ASKED
            try:
                return super().execute(query, params, **{**options, "prepare": True})
            finally:
                connection.prepare_threshold = threshold

    #: What a server says of a prepared statement it no longer has, or has from another client.
    LOST_STATEMENTS = (
        psycopg.errors.InvalidSqlStatementName,
        psycopg.errors.DuplicatePreparedStatement,
    )

#: Any threshold at all: a statement asked to be prepared is prepared at once.
PREPARE_ASKED = 1_000_000

#: The columns an insert writes, in order (the id comes from the database).
INSERT_FIELDS = (
    *("user", "categories", "content", "text_key", "source", "created_by"),
    *("origin", "pinned", "valid_until", "version", "created_at", "updated_at"),
)

Statement = tuple[str, list[Any]]

#: The functions of the first tries, made by the app's migrations ``0010`` to ``0014``, with
#: the arguments the calls below give them.
FUNCTIONS = (
    "agent_memory_create_note_in_room(anyelement, integer, integer, bigint, bigint, varchar, "
    "jsonb, text, text, text, timestamptz, timestamptz, timestamptz)",
    "agent_memory_create_in_room(anyelement, integer, integer, bigint, bigint, bigint, varchar[], "
    "text[], text[], text[], text[], timestamptz[], timestamptz[], timestamptz)",
    "agent_memory_update_note_in_room(anyelement, integer, integer, bigint, integer, bigint, "
    "boolean, integer, jsonb, text, bigint, varchar, text, text, boolean, timestamptz, "
    "timestamptz)",
    "agent_memory_delete_alone(anyelement, integer, integer, bigint, integer, timestamptz, jsonb, "
    "boolean)",
)


def batches_on(using: str) -> bool:
    """Whether the checked writes on ``using`` go as a function call, then a batch (PostgreSQL
    with psycopg 3 and client-side binding)."""
    connection = connections[using]
    return (
        connection.vendor == "postgresql"
        and is_psycopg3
        and not connection.settings_dict.get("OPTIONS", {}).get("server_side_binding")
    )


class NoteStatements:
    """The SQL of the function calls and the batches, for one database alias."""

    def __init__(self, using: str) -> None:
        self.using = using
        connection = connections[using]
        quote = connection.ops.quote_name
        self._quote = quote
        meta = MemoryNote._meta
        self.notes = quote(meta.db_table)
        self.locks = quote(MemoryUserLock._meta.db_table)
        self.versions = quote(MemoryNoteVersion._meta.db_table)
        self.vectors = quote(NoteVector._meta.db_table)
        self.runs = quote(MergeRun._meta.db_table)
        self.snapshots = quote(MergedNoteSnapshot._meta.db_table)
        self.selected = ", ".join(self._column(name) for name in NOTE_FIELDS)
        self._categories = meta.get_field("categories")
        # The person's id as the functions take it: cast to their column's type.
        user = cast("Field[Any, Any]", meta.get_field("user"))
        self._user_type = f"%s::{user.db_type(connection)}"
        self._functions: bool | None = None
        #: Whether the function calls are prepared (until the server is found to lose them).
        self.prepare = True

    @property
    def functions(self) -> bool:
        """Whether the database has the functions of the first tries, with the arguments the
        calls give them (asked once): a database made without the app's migrations (say, tests
        run with ``--no-migrations``) has not, nor one not migrated yet to the code that runs
        (a function of an earlier migration takes other arguments, or has another name), and
        then every checked write is made in full."""
        if self._functions is None:
            # Found as a call finds them: on the connection's search path.
            with connections[self.using].cursor() as cursor:
                cursor.execute(
                    "SELECT bool_and(to_regprocedure(signature) IS NOT NULL) "
                    "FROM unnest(%s::text[]) signature",
                    [list(FUNCTIONS)],
                )
                (found,) = cursor.fetchone()
            self._functions = bool(found)
        return self._functions

    def _column(self, name: str) -> str:
        meta = MemoryNote._meta
        field = meta.pk if name == "pk" else meta.get_field(name.removesuffix("_id"))
        return self._quote(str(cast("Field[Any, Any]", field).column))

    def user(self, user_id: Any) -> Any:
        """The person's id as the database takes it."""
        field = cast("Field[Any, Any]", MemoryNote._meta.get_field("user"))
        return field.get_db_prep_save(user_id, connection=connections[self.using])

    def prepared(self, name: str, value: Any, connection: Any = None) -> Any:
        """``value`` as ``MemoryNote``'s field ``name`` hands it to the database."""
        field = cast("Field[Any, Any]", MemoryNote._meta.get_field(name))
        return field.get_db_prep_save(value, connection=connection or connections[self.using])

    def notes_of(self, rows: Sequence[Sequence[Any]]) -> list[Note]:
        """The notes of rows selected as :attr:`selected`."""
        connection = connections[self.using]
        decode = self._categories.from_db_value
        no_expression = cast(Any, None)
        return [
            note_of_values([*row[:2], decode(row[2], no_expression, connection), *row[3:]])
            for row in rows
        ]

    def run(self, statements: Sequence[Statement]) -> list[list[Any]]:
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

    def call(self, statement: Statement) -> list[Any]:
        """Run one statement (a call of one of the functions, or a read every tool call makes)
        with its values bound by the server, so nothing is quoted into the SQL on our side; the
        rows it returned. The cursor is psycopg's own on Django's connection, wrapped as Django
        wraps its cursors (errors as Django's, the query logged when queries are).

        Outside a transaction the statement is prepared once per connection (see
        :class:`Prepared`): parsing and planning the call cost about as much as the write it
        makes. A server that loses prepared statements between calls (a pooler that hands each
        transaction another connection) is found by its first error, before anything ran; the
        call is then made again unprepared, as every later one on this alias is."""
        connection = connections[self.using]
        connection.ensure_connection()
        raw = connection.connection
        prepare = self.prepare and connection.get_autocommit()
        # Django's wrappers take any DB-API cursor (its stubs say only its own wrapper).
        bound = cast(Any, Prepared(raw) if prepare else psycopg.Cursor(raw))
        wrapped = (
            connection.make_debug_cursor(bound)
            if connection.queries_logged
            else connection.make_cursor(bound)
        )
        try:
            with wrapped as cursor:
                cursor.execute(*statement)
                return list(cursor.fetchall())
        except DatabaseError as error:
            if not prepare or not isinstance(error.__cause__, LOST_STATEMENTS):
                raise
            self.prepare = False
            return self.call(statement)

    # --- the statements ----------------------------------------------------------------------

    def with_keys(self, user_id: Any, keys: Sequence[str]) -> Statement:
        """The person's notes whose text key is one of ``keys``."""
        user, key = self._column("user_id"), self._column("text_key")
        sql = f"SELECT {self.selected} FROM {self.notes} WHERE {user} = %s AND {key} = ANY(%s)"
        return sql, [user_id, list(keys)]

    def note_or_key(self, user_id: Any, note_id: int, key: str) -> Statement:
        """The person's note ``note_id`` and their notes whose text key is ``key``."""
        user, pk, text = self._column("user_id"), self._column("pk"), self._column("text_key")
        sql = (
            f"SELECT {self.selected} FROM {self.notes} "
            f"WHERE {user} = %s AND ({pk} = %s OR {text} = %s)"
        )
        return sql, [user_id, note_id, key]

    def _inserted(self, user_id: Any, note: NewNote, now: datetime) -> list[Any]:
        """The values of :data:`INSERT_FIELDS` that insert ``note`` at version 1."""
        values = {
            "categories": list(note.categories),
            "content": note.content,
            "text_key": text_digest(note.content),
            "source": note.source,
            "created_by": note.source,
            "origin": note.origin,
            "pinned": bool(note.pinned),
            "valid_until": note.valid_until,
            "version": 1,
            "created_at": note.created_at or now,
            "updated_at": now,
        }
        connection = connections[self.using]
        return [
            user_id,
            *(self.prepared(name, value, connection) for name, value in values.items()),
        ]

    def insert(self, user_id: Any, notes: Sequence[NewNote], now: datetime) -> Statement:
        """Insert ``notes`` at version 1, returning their ids in order."""
        columns = ", ".join(self._column(name) for name in INSERT_FIELDS)
        row = "(" + ", ".join(["%s"] * len(INSERT_FIELDS)) + ")"
        params = [value for note in notes for value in self._inserted(user_id, note, now)]
        sql = (
            f"INSERT INTO {self.notes} ({columns}) VALUES {', '.join([row] * len(notes))} "
            f"RETURNING {self._column('pk')}"
        )
        return sql, params

    def create_in_room(
        self,
        user_id: Any,
        notes: Sequence[NewNote],
        keys: Sequence[str],
        now: datetime,
        room: Room,
    ) -> Statement:
        """Insert ``notes`` (``keys``: their text keys, in order) at version 1 and add them to
        the person's counts, only if they fit ``room``: the counts stay within its figures and
        no note of the person has one of their texts. One call of the function
        ``agent_memory_create_in_room``, which takes the person's lock first; its one value is
        their ids in order, or ``NULL`` if they did not fit (nothing written; a person without a
        counts row yet never fits here). The notes' texts must differ from each other. For one
        note :meth:`create_note_in_room` is cheaper."""
        sql = (
            f"SELECT agent_memory_create_in_room({self._user_type}, %s, %s, %s, %s, %s, "
            "%s::varchar[], %s::text[], %s::text[], %s::text[], %s::text[], %s::timestamptz[], "
            "%s::timestamptz[], %s::timestamptz)"
        )
        params = [user_id, *lock_key(user_id), room.max_notes, room.max_total_chars]
        params += [
            sum(len(note.content) for note in notes),
            list(keys),
            [json.dumps(list(note.categories)) for note in notes],
            [note.content for note in notes],
            [str(note.source) for note in notes],
            [note.origin for note in notes],
            [self.prepared("valid_until", note.valid_until) for note in notes],
            [self.prepared("created_at", note.created_at) for note in notes],
            now,
        ]
        return sql, params

    def create_note_in_room(
        self, user_id: Any, note: NewNote, key: str, now: datetime, room: Room
    ) -> Statement:
        """:meth:`create_in_room` for one note, from its values: arrays of one cost more to
        send and to unpack than the write they carry. One call of the function
        ``agent_memory_create_note_in_room``; its one value is the note's id, or ``NULL``."""
        sql = (
            f"SELECT agent_memory_create_note_in_room({self._user_type}, %s, %s, %s, %s, "
            "%s::varchar, %s::jsonb, %s::text, %s::text, %s::text, %s::timestamptz, "
            "%s::timestamptz, %s::timestamptz)"
        )
        params = [user_id, *lock_key(user_id), room.max_notes, room.max_total_chars, key]
        params += [json.dumps(list(note.categories)), note.content, str(note.source)]
        params += [note.origin, self.prepared("valid_until", note.valid_until)]
        params += [self.prepared("created_at", note.created_at), now]
        return sql, params

    def switch(self, user_id: Any) -> Statement:
        """The person's memory switch, from their lock row (no row: no result)."""
        quote = self._quote
        sql = f"SELECT {quote('memory_enabled')} FROM {self.locks} WHERE {quote('user_id')} = %s"
        return sql, [user_id]

    def category_names(
        self, vendor: str, user_id: Any, now: datetime, leave_out: int | None
    ) -> Statement:
        """The person's category names still in use at ``now``, each once, the most recently
        used first (leaving out the note ``leave_out``)."""
        # Columns named with their table: json_each has an "id" of its own.
        user, categories, valid, pk, updated = (
            f"{self.notes}.{self._column(name)}"
            for name in ("user_id", "categories", "valid_until", "pk", "updated_at")
        )
        names = (
            f"jsonb_array_elements_text({categories}) AS name(value)"
            if vendor == "postgresql"
            else f"json_each({categories}) AS name"
        )
        skip = f" AND {pk} <> %s" if leave_out is not None else ""
        sql = (
            f"SELECT name.value FROM {self.notes}, {names} "
            f"WHERE {user} = %s AND ({valid} IS NULL OR {valid} > %s){skip} "
            f"GROUP BY name.value ORDER BY MAX({updated}) DESC, MAX({pk}) DESC"
        )
        params = [user_id, self.prepared("valid_until", now)]
        return sql, params + ([leave_out] if leave_out is not None else [])

    def _at_version(self) -> str:
        user, pk, version = self._column("user_id"), self._column("pk"), self._column("version")
        return f"{user} = %s AND {pk} = %s AND {version} = %s"

    def length_at_version(self) -> str:
        """SQL of the length of the note at a version (``NULL`` if gone or at another one)."""
        content = self._column("content")
        return f"(SELECT LENGTH({content}) FROM {self.notes} WHERE {self._at_version()})"

    def keep_version(self, user_id: Any, note_id: int, version: int) -> Statement:
        """Keep the note at ``version`` as an earlier version (nothing if it is gone or at
        another version), in its slot: over the version :data:`MAX_VERSIONS` older, so all but
        the last :data:`MAX_VERSIONS` are forgotten as it is kept."""
        quote = self._quote
        names = ("categories", "content", "pinned", "valid_until", "source")
        columns = ", ".join(quote(name) for name in names)
        changed = ", ".join(
            f"{quote(name)} = excluded.{quote(name)}" for name in ("version", *names, "changed_at")
        )
        version_column = quote("version")
        keep = (
            f"INSERT INTO {self.versions} ({quote('note_id')}, {quote('user_id')}, "
            f"{version_column}, {quote('slot')}, {columns}, {quote('changed_at')}) "
            f"SELECT {quote('id')}, {quote('user_id')}, {version_column}, %s, {columns}, "
            f"{quote('updated_at')} FROM {self.notes} WHERE {self._at_version()} "
            f"ON CONFLICT ({quote('note_id')}, {quote('slot')}) DO UPDATE SET {changed}"
        )
        return keep, [version % MAX_VERSIONS, user_id, note_id, version]

    def update(
        self, user_id: Any, note_id: int, version: int, note: NewNote, now: datetime
    ) -> Statement:
        """Change the note at ``version`` to ``note`` (the next version, changed ``now``).
        Returns the note as changed."""
        values: dict[str, Any] = {
            "categories": list(note.categories),
            "content": note.content,
            "text_key": text_digest(note.content),
            "source": note.source,
            "origin": note.origin,
            # Not given: the note stays pinned or not, as it is.
            **({} if note.pinned is None else {"pinned": note.pinned}),
            "valid_until": note.valid_until,
            "updated_at": now,
        }
        changes = ", ".join(f"{self._column(name)} = %s" for name in values)
        column = self._column("version")
        sql = (
            f"UPDATE {self.notes} SET {changes}, {column} = {column} + 1 "
            f"WHERE {self._at_version()} RETURNING {self.selected}"
        )
        prepared = [self.prepared(name, value) for name, value in values.items()]
        return sql, [*prepared, user_id, note_id, version]

    def update_in_room(
        self,
        user_id: Any,
        note_id: int,
        version: int,
        note: NewNote,
        key: str,
        now: datetime,
        room: Room,
    ) -> Statement:
        """Change the note at ``version`` to ``note`` (``key``: its text key) only if the
        change fits ``room`` (see :class:`~agent_memory.stores.values.Room`) and the note is
        not pinned: keep it as it was among its versions (in its slot, over the one
        :data:`MAX_VERSIONS` older), add its growth to the person's counts (an edit of the same
        length leaves them), and return what the call does not give, when and by whom the note
        was first written (``created_at``, ``created_by``); no row if it did not fit (nothing
        written). One call of the function ``agent_memory_update_note_in_room`` (migrations
        ``0013`` and ``0014``), which takes the person's lock first."""
        sql = (
            "SELECT created_at, created_by FROM agent_memory_update_note_in_room("
            f"{self._user_type}, %s, %s, %s, %s, %s, %s, %s, %s::jsonb, %s, %s, %s::varchar, %s, "
            "%s, %s::boolean, %s::timestamptz, %s::timestamptz)"
        )
        params = [user_id, *lock_key(user_id), note_id, version, room.max_total_chars]
        params += [room.same_valid_until, MAX_VERSIONS, json.dumps(list(note.categories))]
        params += [note.content, len(note.content), key, str(note.source)]
        params += [note.origin, note.pinned, self.prepared("valid_until", note.valid_until), now]
        return sql, params

    def delete_alone(
        self,
        user_id: Any,
        note_id: int,
        version: int,
        now: datetime,
        erased: Any,
        unpinned: bool = False,
    ) -> Statement:
        """Delete the note at ``version`` as :meth:`delete` does, but only if nothing beside the
        notes holds a copy of its text (see :meth:`copies`; ``erased``: the runs' erased
        proposals), the person has a counts row and, with ``unpinned``, the note is not pinned.
        One call of the function ``agent_memory_delete_alone`` (migration ``0012``), which
        takes the person's lock first; its one value is the deleted text, or ``NULL`` if
        nothing was deleted."""
        sql = (
            f"SELECT agent_memory_delete_alone({self._user_type}, %s, %s, %s, %s, "
            "%s::timestamptz, %s::jsonb, %s::boolean)"
        )
        params = [user_id, *lock_key(user_id), note_id, version, now, self._proposals(erased)]
        return sql, [*params, unpinned]

    def delete(self, user_id: Any, note_id: int, version: int, now: datetime) -> Statement:
        """Delete the note at ``version`` if still valid at ``now``, with its earlier versions
        and its vector, and take it off the person's counts: one statement, returning the
        deleted text and whether the person had a counts row."""
        quote = self._quote
        valid = self._column("valid_until")
        count, total = quote("note_count"), quote("total_chars")
        sql = (
            f"WITH target AS (SELECT {self._column('pk')} FROM {self.notes} "
            f"WHERE {self._at_version()} AND ({valid} IS NULL OR {valid} > %s)), "
            f"old_versions AS (DELETE FROM {self.versions} "
            f"WHERE {quote('note_id')} IN (SELECT * FROM target)), "
            f"old_vector AS (DELETE FROM {self.vectors} "
            f"WHERE {quote('note_id')} IN (SELECT * FROM target)), "
            f"gone AS (DELETE FROM {self.notes} WHERE {self._column('pk')} IN "
            f"(SELECT * FROM target) RETURNING {self._column('content')}), "
            f"counted AS (UPDATE {self.locks} SET {count} = {count} - g.n, "
            f"{total} = {total} - g.c FROM (SELECT COUNT(*) AS n, "
            f"COALESCE(SUM(LENGTH({self._column('content')})), 0) AS c FROM gone) AS g "
            f"WHERE {quote('user_id')} = %s RETURNING 1) "
            f"SELECT {self._column('content')}, (SELECT COUNT(*) FROM counted) FROM gone"
        )
        return sql, [user_id, note_id, version, now, user_id]

    def _proposals(self, value: Any) -> Any:
        """``value`` as ``MergeRun.proposals`` hands it to the database."""
        proposals = MergeRun._meta.get_field("proposals")
        return proposals.get_db_prep_save(value, connection=connections[self.using])

    def copies(self, user_id: Any, note_id: int, erased: Any) -> Statement:
        """Whether anything beside the notes may hold a copy of the note's text: a snapshot of
        a merge that made it, or a run of the person not erased yet (``erased``: the runs'
        erased proposals)."""
        quote = self._quote
        sql = (
            f"SELECT EXISTS (SELECT 1 FROM {self.snapshots} WHERE {quote('user_id')} = %s "
            f"AND {quote('merged_note_id')} = %s) OR EXISTS (SELECT 1 FROM {self.runs} "
            f"WHERE {quote('user_id')} = %s AND {quote('proposals')} <> %s)"
        )
        return sql, [user_id, note_id, user_id, self._proposals(erased)]
