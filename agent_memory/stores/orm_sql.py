"""The checked writes of ``DjangoStore`` on PostgreSQL, each in one batch of statements.

A batch is one ``cursor.execute()`` of several statements: the person's advisory lock first,
then the statements that read and write. Under READ COMMITTED each statement of the batch reads
as of its own start, so every statement after the lock sees what the lock's previous holder
committed. Sent outside a transaction, PostgreSQL runs the batch as one transaction of its own
(the lock is released when it ends), so it costs one round trip.

- **Room**: a write whose check comes with its :class:`~agent_memory.stores.values.Room` is
  tried first as such a batch on its own: the lock, then one statement that adds the write to
  the person's counts only if they stay within the room and no note has the same text, and
  writes only if the counts moved (:meth:`NoteStatements.insert_in_room`,
  :meth:`~NoteStatements.update_in_room`); a delete likewise, when nothing beside the notes holds
  a copy of the text. Nothing written means the write may not fit: then it is made in full.
- **In full**: the batch inside Django's ``transaction.atomic()`` (``BEGIN``, the batch,
  ``COMMIT``): the lock, the reads the check needs (the counts, the notes with the same text),
  the write; the check runs on what the batch returned, and if it refuses, the atomic block rolls
  the whole write back.

The SQL is written here over the app's tables (names quoted by the connection, values prepared
by the model's own fields), once per store and database alias. Several statements in one call
need psycopg 3 with client-side binding (Django's default); elsewhere the ORM path is used.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, cast

from django.db import connections
from django.db.models import Field

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
    from django.db.backends.postgresql.psycopg_any import is_psycopg3
except ImportError:  # no PostgreSQL driver installed
    is_psycopg3 = False

#: The columns an insert writes, in order (the id comes from the database).
INSERT_FIELDS = (
    *("user", "categories", "content", "text_key", "source", "created_by"),
    *("origin", "pinned", "valid_until", "version", "created_at", "updated_at"),
)

Statement = tuple[str, list[Any]]


def batches_on(using: str) -> bool:
    """Whether the checked writes on ``using`` go in one batch (PostgreSQL with psycopg 3 and
    client-side binding)."""
    connection = connections[using]
    return (
        connection.vendor == "postgresql"
        and is_psycopg3
        and not connection.settings_dict.get("OPTIONS", {}).get("server_side_binding")
    )


class NoteStatements:
    """The SQL of the batches, for one database alias."""

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
        #: The SQL of :meth:`insert_in_room` by the number of notes.
        self._room_inserts: dict[int, str] = {}

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

    def insert_in_room(
        self, user_id: Any, notes: Sequence[NewNote], now: datetime, room: Room
    ) -> Statement:
        """Insert ``notes`` at version 1 and add them to the person's counts, only if they fit
        ``room``: the counts stay within its figures and no note of the person has one of their
        texts. Returns their ids in order, or no row if they did not fit (nothing written; a
        person without a counts row yet never fits here)."""
        added = [len(notes), sum(len(note.content) for note in notes)]
        keys = sorted({text_digest(note.content) for note in notes})
        params: list[Any] = [*added, user_id, added[0], room.max_notes]
        params += [added[1], room.max_total_chars, user_id, keys]
        for note in notes:
            params += self._inserted(user_id, note, now)
        sql = self._room_inserts.get(len(notes))
        if sql is None:
            sql = self._room_inserts[len(notes)] = self._insert_in_room_sql(len(notes))
        return sql, params

    def _insert_in_room_sql(self, count: int) -> str:
        quote = self._quote
        total, notes = quote("total_chars"), quote("note_count")
        user, key, pk = self._column("user_id"), self._column("text_key"), self._column("pk")
        counted = (
            f"counted AS (UPDATE {self.locks} SET {notes} = {notes} + %s, "
            f"{total} = {total} + %s WHERE {quote('user_id')} = %s AND {notes} + %s <= %s "
            f"AND {total} + %s <= %s AND NOT EXISTS (SELECT 1 FROM {self.notes} "
            f"WHERE {user} = %s AND {key} = ANY(%s)) RETURNING 1)"
        )
        # A single-row INSERT … SELECT per note: each takes its column types from the table.
        columns = ", ".join(self._column(name) for name in INSERT_FIELDS)
        insert = (
            f"INSERT INTO {self.notes} ({columns}) "
            f"SELECT {', '.join(['%s'] * len(INSERT_FIELDS))} FROM counted RETURNING {pk}"
        )
        if count == 1:
            return f"WITH {counted} {insert}"
        inserts = ", ".join(f"new_{index} AS ({insert})" for index in range(count))
        ids = " UNION ALL ".join(
            f"SELECT {index} AS position, {pk} FROM new_{index}" for index in range(count)
        )
        return f"WITH {counted}, {inserts} SELECT {pk} FROM ({ids}) AS ids ORDER BY position"

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

    def keep_version(
        self, user_id: Any, note_id: int, version: int, when: str = ""
    ) -> list[Statement]:
        """Keep the note at ``version`` as an earlier version (nothing if it is gone or at
        another version), and forget all but the last :data:`MAX_VERSIONS` of them; ``when``:
        a further SQL condition of both (``AND …``)."""
        quote = self._quote
        columns = ", ".join(
            quote(name)
            for name in ("version", "categories", "content", "pinned", "valid_until", "source")
        )
        keep = (
            f"INSERT INTO {self.versions} ({quote('note_id')}, {quote('user_id')}, {columns}, "
            f"{quote('changed_at')}) SELECT {quote('id')}, {quote('user_id')}, {columns}, "
            f"{quote('updated_at')} FROM {self.notes} WHERE {self._at_version()}{when}"
        )
        trim = (
            f"DELETE FROM {self.versions} WHERE {quote('note_id')} = %s "
            f"AND {quote('user_id')} = %s AND {quote('version')} <= %s{when}"
        )
        return [
            (keep, [user_id, note_id, version]),
            (trim, [note_id, user_id, version - MAX_VERSIONS]),
        ]

    def update(
        self, user_id: Any, note_id: int, version: int, note: NewNote, now: datetime, when: str = ""
    ) -> Statement:
        """Change the note at ``version`` to ``note`` (the next version, changed ``now``);
        ``when``: a further SQL condition (``AND …``). Returns the note as changed."""
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
            f"WHERE {self._at_version()}{when} RETURNING {self.selected}"
        )
        prepared = [self.prepared(name, value) for name, value in values.items()]
        return sql, [*prepared, user_id, note_id, version]

    def update_in_room(
        self, user_id: Any, note_id: int, version: int, note: NewNote, now: datetime, room: Room
    ) -> Statement:
        """Change the note at ``version`` to ``note`` only if the change fits ``room`` (see
        :class:`~agent_memory.stores.values.Room`): keep it as it was among its versions, add
        its growth to the person's counts, and return it as changed; no row if it did not fit
        (nothing written)."""
        quote = self._quote
        total = quote("total_chars")
        pk, user, key, pinned, valid, content = (
            self._column(name)
            for name in ("pk", "user_id", "text_key", "pinned", "valid_until", "content")
        )
        same_end = f" AND {valid} IS NOT DISTINCT FROM %s" if room.same_valid_until else ""
        target = (
            f"target AS (SELECT LENGTH({content}) AS length FROM {self.notes} "
            f"WHERE {self._at_version()} AND NOT {pinned} AND ({valid} IS NULL OR {valid} > %s)"
            f"{same_end} AND NOT EXISTS (SELECT 1 FROM {self.notes} "
            f"WHERE {user} = %s AND {key} = %s AND {pk} <> %s))"
        )
        length = len(note.content)
        params: list[Any] = [user_id, note_id, version, self.prepared("valid_until", now)]
        if room.same_valid_until:
            params.append(self.prepared("valid_until", note.valid_until))
        params += [user_id, text_digest(note.content), note_id]
        counted = (
            f"counted AS (UPDATE {self.locks} SET {total} = {total} + %s - target.length "
            f"FROM target WHERE {quote('user_id')} = %s "
            f"AND (%s <= target.length OR {total} + %s - target.length <= %s) RETURNING 1)"
        )
        params += [length, user_id, length, length, room.max_total_chars]
        when = " AND EXISTS (SELECT 1 FROM counted)"
        (keep, kept), (trim, trimmed) = self.keep_version(user_id, note_id, version, when)
        ctes = [target, counted, f"kept AS ({keep})"]
        params += kept
        if version > MAX_VERSIONS:  # else no earlier version is old enough to forget
            ctes.append(f"trimmed AS ({trim})")
            params += trimmed
        change, changed = self.update(user_id, note_id, version, note, now, when)
        return f"WITH {', '.join(ctes)} {change}", [*params, *changed]

    def delete(
        self,
        user_id: Any,
        note_id: int,
        version: int,
        now: datetime,
        *,
        without_copies: Any = None,
    ) -> Statement:
        """Delete the note at ``version`` if still valid at ``now``, with its earlier versions
        and its vector, and take it off the person's counts: one statement, returning the
        deleted text and whether the person had a counts row.

        ``without_copies`` (the runs' erased proposals): delete only if nothing beside the
        notes holds a copy of its text (see :meth:`copies`) and the person has a counts row;
        otherwise nothing is deleted and no row returned."""
        quote = self._quote
        valid = self._column("valid_until")
        count, total = quote("note_count"), quote("total_chars")
        plain, plain_params = "", list[Any]()
        if without_copies is not None:
            copies, plain_params = self._copies(user_id, note_id, without_copies)
            plain = (
                f" AND NOT ({copies}) AND EXISTS (SELECT 1 FROM {self.locks} "
                f"WHERE {quote('user_id')} = %s)"
            )
            plain_params = [*plain_params, user_id]
        sql = (
            f"WITH target AS (SELECT {self._column('pk')} FROM {self.notes} "
            f"WHERE {self._at_version()} AND ({valid} IS NULL OR {valid} > %s){plain}), "
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
        return sql, [user_id, note_id, version, now, *plain_params, user_id]

    def _copies(self, user_id: Any, note_id: int, erased: Any) -> Statement:
        quote = self._quote
        sql = (
            f"EXISTS (SELECT 1 FROM {self.snapshots} WHERE {quote('user_id')} = %s "
            f"AND {quote('merged_note_id')} = %s) OR EXISTS (SELECT 1 FROM {self.runs} "
            f"WHERE {quote('user_id')} = %s AND {quote('proposals')} <> %s)"
        )
        proposals = MergeRun._meta.get_field("proposals")
        prepared = proposals.get_db_prep_save(erased, connection=connections[self.using])
        return sql, [user_id, note_id, user_id, prepared]

    def copies(self, user_id: Any, note_id: int, erased: Any) -> Statement:
        """Whether anything beside the notes may hold a copy of the note's text: a snapshot of
        a merge that made it, or a run of the person not erased yet."""
        sql, params = self._copies(user_id, note_id, erased)
        return f"SELECT {sql}", params
