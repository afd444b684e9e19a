"""What a checked create and a checked update cost the PostgreSQL server alone, part by part,
beside LangGraph's put.

Each create case is one ``pgbench`` run (one connection, :data:`TRANSACTIONS` transactions, a new
text each time), so no Python is measured on either side; the parts add up to our checked
create:

- LangGraph's ``put`` as its store sends it: one prepared statement into its table;
- the same insert into our notes table, prepared, then as a plain query (as Django sends every
  statement: parsed and planned each time);
- that insert into a copy of the notes table with its primary key only (no index for the
  block's order, the same-text check or expiry, no foreign key to the person);
- the person's advisory lock, then the insert, in one message;
- the lock, the person's counts, then the insert;
- our checked create of one note itself
  (:meth:`~agent_memory.stores.orm_sql.NoteStatements.create_note_in_room`: one call of a
  function that takes the lock, checks the room, counts and inserts), as ``DjangoStore`` sends
  it: prepared once per connection, its values bound by the server; and unprepared, as it is
  sent inside a transaction of the site's.

Then the same for a checked update of one note, in one pgbench run of :data:`TRANSACTIONS` a
case, each transaction running one case drawn at random (so a slow moment of the machine falls
on each alike), every case changing that note to a new text of the same length (our cases count
the note's version up together, and every call is checked to have written):

- LangGraph's ``put`` of the same key (its upsert changes the row where it lies);
- a bare update of our note, prepared: the one statement a store that checks nothing and keeps
  no history would send;
- that update with what SPEC requires of it beside the write, in one prepared statement: the
  note at its version, not pinned, still valid, no other note of the person with the new text,
  and the note's earlier version kept in its slot. It takes no lock and leaves the person's
  counts alone, so it is not safe beside other writers: it is the floor of the work, not a way
  to do it;
- our checked update itself
  (:meth:`~agent_memory.stores.orm_sql.NoteStatements.update_in_room`: the person's lock, the
  checks, the counts where the length changes, the earlier version kept, the change), prepared
  as ``DjangoStore`` sends it.

Skipped when ``pgbench`` is not installed.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from .report import Row, ms, times

try:
    import psycopg
except ImportError:  # no PostgreSQL driver: the benchmarks skip PostgreSQL
    psycopg = None

TRANSACTIONS = 3000
#: The stand-in text in the rendered statement, replaced (with its key) by pgbench variables.
_TEXT = "ANATOMY-TEXT"
_NEW_TEXT = "('Anatomy ' || :k || ': tabs.')"
_NEW_KEY = "md5(:k::text)"
#: How many texts the cases draw from. From 10**9, two of a run's 18,000 notes were alike about
#: one run in ten (the checked create refused the second, and the run's count came out short);
#: from 10**15, about once in six million runs.
KEYS = 10**15
#: The updates' texts are drawn from these numbers, all of fifteen digits: every text has the
#: same length, so our update leaves the person's counts alone as an edit of the same length does.
UPDATE_KEYS = (10**14, 10**15 - 1)
_UPDATE_TEXT = "('Anatomy update ' || :k || ': tabs.')"
#: A text of the length of every update's, for the statements rendered in Python.
_UPDATE_SAMPLE = f"Anatomy update {UPDATE_KEYS[0]}: tabs."
#: The stand-in version in our rendered update, replaced by the pgbench variable.
_VERSION = 2_147_000_001


def rows(url: str, user_id: Any, smoke: bool) -> list[Row]:
    if shutil.which("pgbench") is None:
        return [Row("tool", "server alone (pgbench): skipped, pgbench is not installed", "-")]
    from django.db import connections

    connection = connections["postgresql"]
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE TABLE IF NOT EXISTS anatomy_pkey_only "
            "(LIKE agent_memory_memorynote INCLUDING DEFAULTS INCLUDING IDENTITY)"
        )
        cursor.execute("ALTER TABLE anatomy_pkey_only DROP CONSTRAINT IF EXISTS anatomy_pkey")
        cursor.execute("ALTER TABLE anatomy_pkey_only ADD CONSTRAINT anatomy_pkey PRIMARY KEY (id)")
    lock, ours = _our_statements(user_id)
    insert = _rendered_insert(user_id)
    counts = (
        f"UPDATE agent_memory_memoryuserlock SET note_count = note_count + 0 "
        f"WHERE user_id = {int(user_id)}"
    )
    put = _put("'k' || :k", '\'{"content": "tabs"}\'::jsonb')
    cases = (
        ("LangGraph put, prepared", put, "prepared"),
        ("insert into our notes, prepared", insert, "prepared"),
        ("insert into our notes, plain query", insert, "simple"),
        (
            "insert into a copy with its primary key only, prepared",
            insert.replace("agent_memory_memorynote", "anatomy_pkey_only", 1),
            "prepared",
        ),
        ("lock, insert (one message)", f"{lock} \\; {insert}", "simple"),
        ("lock, counts, insert (one message)", f"{lock} \\; {counts} \\; {insert}", "simple"),
        (
            "our checked create (one function call), prepared as the store sends it",
            ours,
            "prepared",
        ),
        ("our checked create, unprepared (inside a transaction of the site's)", ours, "extended"),
    )
    transactions = 50 if smoke else TRANSACTIONS
    measured = [(name, _pgbench(url, [sql], mode, transactions)[0][0]) for name, sql, mode in cases]
    updated = _updates(url, user_id, transactions)
    written = _remove_written(user_id)
    # Every case wrote a note each time but the copy's (ours too: the room held each time), and
    # the updates' note was made once.
    assert written == transactions * (len(cases) - 2) + 1, written
    each = f"{transactions:,} transactions"
    return [
        *_rows(measured, each, "LangGraph put"),
        *_rows(
            updated,
            f"{len(updated) * transactions:,} transactions, each a case drawn at random",
            "LangGraph put of the same key",
        ),
    ]


def _rows(measured: list[tuple[str, float]], run: str, put: str) -> list[Row]:
    """One row a case, each beside the first (LangGraph's ``put``); ``run`` says how pgbench
    ran them."""
    put_s = measured[0][1]
    return [
        Row(
            "tool",
            f"PostgreSQL server alone (pgbench, {run}): {name}",
            ms(seconds),
            "" if index == 0 else f"{ms(put_s)} ({put})",
            "" if index == 0 else times(seconds / put_s),
            figures={"anatomy": name, "latency_s": seconds, "put_s": put_s},
        )
        for index, (name, seconds) in enumerate(measured)
    ]


def _updates(url: str, user_id: Any, transactions: int) -> list[tuple[str, float]]:
    """The update's cases, on a note of the person's made for them (removed with the creates'
    notes), in one pgbench run: each transaction one case drawn at random, so a slow moment of
    the machine falls on every case alike; every one of our calls checked to have changed the
    note."""
    from agent_memory.models import MemoryNote

    note = MemoryNote.objects.using("postgresql").create(
        user_id=user_id, categories=["Tools"], content="Anatomy update: the note the cases change."
    )
    put = _put("'same'", f"jsonb_build_object('content', {_UPDATE_TEXT})")
    cases = (
        ("LangGraph put of the same key, prepared", put),
        ("update of our note, prepared", _bare_update(user_id, note.pk)),
        (
            "that update with its checks and the earlier version kept, one statement "
            "(no lock, no counts: the floor of the work), prepared",
            _update_floor(user_id, note.pk),
        ),
        (
            "our checked update (one function call), prepared as the store sends it",
            _our_update(user_id, note.pk),
        ),
    )
    stored = MemoryNote.objects.using("postgresql").filter(pk=note.pk)
    version = stored.get().version
    measured = _pgbench(
        url,
        [sql for _, sql in cases],
        "prepared",
        transactions * len(cases),
        keys=UPDATE_KEYS,
        version=version,
    )
    # Each of our calls changed the note at the version the one before left: a call that found
    # it at another version would have written nothing, and the count would fall short.
    ours = sum(count for _, count in measured[1:])
    assert stored.get().version == version + ours, (version, measured)
    return [(name, seconds) for (name, _), (seconds, _) in zip(cases, measured, strict=True)]


def _bare_update(user_id: Any, note_id: int) -> str:
    return (
        "UPDATE agent_memory_memorynote SET categories = '[\"Work\"]'::jsonb, "
        f"content = {_UPDATE_TEXT}, text_key = {_NEW_KEY}, updated_at = now(), "
        f"version = version + 1 WHERE id = {int(note_id)} AND user_id = {int(user_id)} "
        "AND version = :v"
    )


def _update_floor(user_id: Any, note_id: int) -> str:
    """The bare update with the note's checks and its earlier version kept, in one statement."""
    from agent_memory.notes import MAX_VERSIONS

    kept = "version, categories, content, pinned, valid_until, source"
    return _one_line(
        f"""
        WITH old AS (
            SELECT id, user_id, {kept}, updated_at FROM agent_memory_memorynote AS note
             WHERE id = {int(note_id)} AND user_id = {int(user_id)} AND version = :v
               AND NOT pinned AND (valid_until IS NULL OR valid_until > now())
               AND NOT EXISTS (SELECT 1 FROM agent_memory_memorynote AS other
                                WHERE other.user_id = note.user_id
                                  AND other.text_key = {_NEW_KEY} AND other.id <> note.id)
        ), kept AS (
            INSERT INTO agent_memory_memorynoteversion (note_id, user_id, slot, {kept}, changed_at)
            SELECT id, user_id, version % {MAX_VERSIONS}, {kept}, updated_at FROM old
            ON CONFLICT (note_id, slot) DO UPDATE SET
                {", ".join(f"{name} = excluded.{name}" for name in kept.split(", "))},
                changed_at = excluded.changed_at
        )
        UPDATE agent_memory_memorynote AS note SET categories = '["Work"]'::jsonb,
               content = {_UPDATE_TEXT}, text_key = {_NEW_KEY}, updated_at = now(),
               version = note.version + 1
          FROM old WHERE note.id = old.id
        """
    )


def _our_update(user_id: Any, note_id: int) -> str:
    """Our checked update of ``note_id`` as one line of literal SQL, its text, key and version
    pgbench variables."""
    from django.utils import timezone

    from agent_memory.kinds import NoteSource
    from agent_memory.notes import NewNote
    from agent_memory.rules import text_digest
    from agent_memory.stores.orm_sql import NoteStatements
    from agent_memory.stores.values import Room

    sql = NoteStatements("postgresql")
    note = NewNote(("Work",), _UPDATE_SAMPLE, NoteSource.AGENT)
    room = Room(10**6, 10**9, same_valid_until=True)
    key = text_digest(_UPDATE_SAMPLE)
    statement = sql.update_in_room(
        sql.user(user_id), note_id, _VERSION, note, key, timezone.now(), room
    )
    variables = {f"'{_UPDATE_SAMPLE}'": _UPDATE_TEXT, f"'{key}'": _NEW_KEY, str(_VERSION): ":v"}
    return _rendered(statement, variables)


def _remove_written(user_id: Any) -> int:
    """Remove what the cases wrote (the copy of the table, the person's new notes and the
    earlier versions kept of them), set the person's counts right again, and say how many notes
    had been written."""
    from django.db import connections, transaction

    from agent_memory.locking import recount, set_tally

    with transaction.atomic(using="postgresql"), connections["postgresql"].cursor() as cursor:
        cursor.execute("DROP TABLE anatomy_pkey_only")
        written = "SELECT id FROM agent_memory_memorynote WHERE user_id = %s AND content LIKE %s"
        # The earlier versions the updates kept go first (their key to the note is checked at
        # the commit).
        cursor.execute(
            f"DELETE FROM agent_memory_memorynoteversion WHERE note_id IN ({written})",
            [user_id, "Anatomy %"],
        )
        cursor.execute(
            f"DELETE FROM agent_memory_memorynote WHERE id IN ({written})", [user_id, "Anatomy %"]
        )
        written = int(cursor.rowcount)
        set_tally(user_id, "postgresql", recount(user_id, "postgresql"))
    return written


def _our_statements(user_id: Any) -> tuple[str, str]:
    """The lock alone, and our checked create, each as one line of literal SQL."""
    from django.utils import timezone

    from agent_memory.kinds import NoteSource
    from agent_memory.locking import lock_statement
    from agent_memory.notes import NewNote
    from agent_memory.rules import text_digest
    from agent_memory.stores.orm_sql import NoteStatements
    from agent_memory.stores.values import Room

    sql = NoteStatements("postgresql")
    note = NewNote(("Tools",), _TEXT, NoteSource.AGENT)
    room = Room(10**6, 10**9)
    key = text_digest(_TEXT)
    ours = sql.create_note_in_room(sql.user(user_id), note, key, timezone.now(), room)
    return (
        _rendered(lock_statement(user_id), {}),
        _rendered(ours, {f"'{_TEXT}'": _NEW_TEXT, f"'{key}'": _NEW_KEY}),
    )


def _rendered_insert(user_id: Any) -> str:
    columns = (
        "user_id, categories, content, text_key, source, created_by, origin, pinned, "
        "valid_until, version, created_at, updated_at"
    )
    return (
        f"INSERT INTO agent_memory_memorynote ({columns}) VALUES ({int(user_id)}, "
        f"'[\"Tools\"]'::jsonb, {_NEW_TEXT}, {_NEW_KEY}, 'agent', 'agent', '', false, NULL, 1, "
        "now(), now())"
    )


def _one_line(sql: str) -> str:
    return re.sub(r"\s+", " ", sql).strip()


def _rendered(statement: tuple[str, list[Any]], variables: dict[str, str]) -> str:
    """``statement`` as one line of literal SQL, each literal of ``variables`` (found exactly
    once) made the pgbench expression it maps to."""
    from django.db import connections

    cursor = psycopg.ClientCursor(connections["postgresql"].connection)
    rendered = _one_line(cursor.mogrify(*statement))
    for literal, variable in variables.items():
        assert rendered.count(literal) == 1, literal
        rendered = rendered.replace(literal, variable)
    return rendered


def _put(key: str, value: str) -> str:
    """LangGraph's ``put`` of ``key`` as its store sends it: one upsert into its table."""
    return (
        "INSERT INTO store (prefix, key, value, created_at, updated_at) "
        f"VALUES ('anatomy', {key}, {value}, now(), now()) "
        "ON CONFLICT (prefix, key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()"
    )


def _pgbench(
    url: str,
    scripts: list[str],
    mode: str,
    transactions: int,
    *,
    keys: tuple[int, int] = (1, KEYS),
    version: int | None = None,
) -> list[tuple[float, int]]:
    """Each script's mean seconds a transaction under pgbench on one connection, and how many
    transactions ran it: ``transactions`` in all, each running one script drawn at random.
    ``:k`` is drawn from ``keys`` each time; with ``version``, ``:v`` starts there and every
    script that names it counts it up."""
    command = ["pgbench", "-n", "-M", mode, "-t", str(transactions)]
    if version is not None:
        command += ["-D", f"v={version}"]
    with tempfile.TemporaryDirectory() as folder:
        for number, sql in enumerate(scripts):
            lines = [f"\\set k random({keys[0]}, {keys[1]})", f"{sql};"]
            if version is not None and ":v" in sql:
                lines.append("\\set v :v + 1")
            script = Path(folder) / f"case{number}.sql"
            script.write_text("\n".join(lines) + "\n")
            command += ["-f", str(script)]
        answer = subprocess.run([*command, url], capture_output=True, text=True, timeout=600)
    if answer.returncode:
        raise RuntimeError(f"pgbench failed: {answer.stderr[-500:]}")
    # With several scripts, pgbench reports each in a section of its own after the run's.
    sections = re.split(r"^SQL script \d+:", answer.stdout, flags=re.M)
    measured = []
    for section in sections[1:] if len(scripts) > 1 else sections:
        latency = re.search(r"latency average = ([0-9.]+) ms", section)
        count = re.search(r"- ([0-9]+) transactions", section) if len(scripts) > 1 else None
        if latency is None:
            raise RuntimeError(f"pgbench printed no latency: {answer.stdout[-500:]}")
        measured.append(
            (float(latency.group(1)) / 1000, int(count.group(1)) if count else transactions)
        )
    if len(measured) != len(scripts):
        raise RuntimeError(f"pgbench reported {len(measured)} of {len(scripts)} scripts")
    return measured
