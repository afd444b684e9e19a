"""What a checked create costs the PostgreSQL server alone, part by part, beside LangGraph's put.

Each case is one ``pgbench`` run (one connection, :data:`TRANSACTIONS` transactions, a new
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
    put = (
        "INSERT INTO store (prefix, key, value, created_at, updated_at) "
        "VALUES ('anatomy', 'k' || :k, '{\"content\": \"tabs\"}'::jsonb, now(), now()) "
        "ON CONFLICT (prefix, key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()"
    )
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
    measured = [(name, _pgbench(url, sql, mode, transactions)) for name, sql, mode in cases]
    written = _remove_written(user_id)
    # Every case wrote a note each time but the copy's (ours too: the room held each time).
    assert written == transactions * (len(cases) - 2), written
    put_s = measured[0][1]
    return [
        Row(
            "tool",
            f"PostgreSQL server alone (pgbench, {transactions:,} transactions): {name}",
            ms(seconds),
            "" if index == 0 else f"{ms(put_s)} (LangGraph put)",
            "" if index == 0 else times(seconds / put_s),
            figures={"anatomy": name, "latency_s": seconds, "put_s": put_s},
        )
        for index, (name, seconds) in enumerate(measured)
    ]


def _remove_written(user_id: Any) -> int:
    """Remove what the cases wrote (the copy of the table, the person's new notes), set the
    person's counts right again, and say how many notes had been written."""
    from django.db import connections, transaction

    from agent_memory.locking import recount, set_tally

    with transaction.atomic(using="postgresql"), connections["postgresql"].cursor() as cursor:
        cursor.execute("DROP TABLE anatomy_pkey_only")
        cursor.execute(
            "DELETE FROM agent_memory_memorynote WHERE user_id = %s AND content LIKE %s",
            [user_id, "Anatomy %"],
        )
        written = int(cursor.rowcount)
        set_tally(user_id, "postgresql", recount(user_id, "postgresql"))
    return written


def _our_statements(user_id: Any) -> tuple[str, str]:
    """The lock alone, and our checked create, each as one line of literal SQL."""
    from django.db import connections
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
    statements = [
        lock_statement(user_id),
        sql.create_note_in_room(sql.user(user_id), note, text_digest(_TEXT), timezone.now(), room),
    ]
    cursor = psycopg.ClientCursor(connections["postgresql"].connection)
    lock, ours = (_one_line(cursor.mogrify(text, params)) for text, params in statements)
    return lock, _variable(ours)


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


def _variable(sql: str) -> str:
    """The rendered statement with the stand-in text and key made new for each transaction."""
    from agent_memory.rules import text_digest

    return sql.replace(f"'{_TEXT}'", _NEW_TEXT).replace(f"'{text_digest(_TEXT)}'", _NEW_KEY)


def _pgbench(url: str, sql: str, mode: str, transactions: int) -> float:
    """The mean seconds per transaction of ``sql`` under pgbench on one connection."""
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "case.sql"
        script.write_text(f"\\set k random(1, {KEYS})\n{sql};\n")
        answer = subprocess.run(
            ["pgbench", "-n", "-M", mode, "-t", str(transactions), "-f", str(script), url],
            capture_output=True,
            text=True,
            timeout=600,
        )
    if answer.returncode:
        raise RuntimeError(f"pgbench failed: {answer.stderr[-500:]}")
    found = re.search(r"latency average = ([0-9.]+) ms", answer.stdout)
    if found is None:
        raise RuntimeError(f"pgbench printed no latency: {answer.stdout[-500:]}")
    return float(found.group(1)) / 1000
