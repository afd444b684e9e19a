"""The optimizer under real OS processes: two runners claiming one person at once, and a SIGKILL
in the middle of applying a merge. Data is committed so the children see it."""

from __future__ import annotations

import os
import signal
import tempfile
import time
from pathlib import Path

import pytest
from django.db import connection

from agent_memory import LongTermMemory
from agent_memory.locking import ADVISORY_NAMESPACE, advisory_key
from agent_memory.models import MemoryNote, MergedNoteSnapshot, MergeRun
from tests.optimizer_workers import MERGED, read_line, start
from tests.processes import kill_group

# The [postgres] extra: the side connections below speak to PostgreSQL directly.
psycopg = pytest.importorskip("psycopg")

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.processes]


def two_duplicates(user):
    return LongTermMemory().create_notes(
        user,
        [
            {"categories": ["Drinks"], "content": "Likes green tea"},
            {"categories": ["Drinks"], "content": "Likes green tea in the morning"},
        ],
    )


def pg_connect():
    settings = connection.settings_dict
    return psycopg.connect(
        host=settings["HOST"] or "127.0.0.1",
        port=settings["PORT"] or 5432,
        user=settings["USER"],
        password=settings["PASSWORD"] or None,
        dbname=settings["NAME"],
        autocommit=True,
    )


def wait_for(condition, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        time.sleep(0.02)


def test_two_runners_claiming_one_person_at_once_one_wins(user):
    sources = two_duplicates(user)
    database = connection.settings_dict["NAME"]
    postgres = connection.vendor == "postgresql"
    with tempfile.TemporaryDirectory() as gate_dir:
        gate = Path(gate_dir)
        children = [start("optimize", database, gate, user=user.pk) for _ in range(2)]
        try:
            pids = [read_line(child)["pid"] for child in children]
            wait_for(lambda: len(list(gate.glob("ready-*"))) == 2)
            if postgres:
                # Hold the person's lock, let both children queue on it inside their claim,
                # then release: they contend for the very same lock at the same moment.
                with pg_connect() as holder:
                    key = [ADVISORY_NAMESPACE, advisory_key(user.pk)]
                    holder.execute("SELECT pg_advisory_lock(%s, %s)", key)
                    (gate / "go").touch()

                    def both_waiting():
                        rows = holder.execute(
                            "SELECT count(*) FROM pg_stat_activity "
                            "WHERE pid = ANY(%s) AND wait_event_type = 'Lock'",
                            [pids],
                        ).fetchone()
                        return rows[0] == 2

                    wait_for(both_waiting)
                    holder.execute("SELECT pg_advisory_unlock(%s, %s)", key)
            else:
                (gate / "go").touch()
            results = [read_line(child) for child in children]
        finally:
            for child in children:
                if child.poll() is None:
                    child.kill()
                child.communicate()
                kill_group(child.pid)
    assert sorted(result["status"] for result in results) == ["skipped", "succeeded"]
    assert MergeRun.objects.count() == 1
    (note,) = MemoryNote.objects.filter(user=user)
    assert (note.content, note.source) == (MERGED, "merge")
    assert not MemoryNote.objects.filter(pk__in=[source.id for source in sources]).exists()


def test_sigkill_in_the_middle_of_applying_a_merge_leaves_it_not_applied_at_all(user):
    if connection.vendor != "postgresql":
        pytest.skip("the SIGKILL test runs on PostgreSQL")
    sources = two_duplicates(user)
    child = start("apply_and_hang", connection.settings_dict["NAME"], user=user.pk)
    try:
        message = read_line(child)
        assert message["mid_apply"]
        with pg_connect() as observer:
            # Prove the child is mid-transaction: it has written to the notes table already.
            locks = observer.execute(
                "SELECT l.mode FROM pg_locks l JOIN pg_class c ON c.oid = l.relation "
                "WHERE l.pid = %s AND c.relname = %s",
                [message["pid"], MemoryNote._meta.db_table],
            ).fetchall()
            assert ("RowExclusiveLock",) in locks
            os.kill(child.pid, signal.SIGKILL)
            child.wait(timeout=30)
            assert child.returncode == -signal.SIGKILL

            def backend_gone():
                row = observer.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE pid = %s", [message["pid"]]
                ).fetchone()
                return row[0] == 0

            wait_for(backend_gone)
    finally:
        if child.poll() is None:
            child.kill()
        child.communicate()
        kill_group(child.pid)

    notes = list(MemoryNote.objects.filter(user=user).order_by("pk"))
    applied = [note.content for note in notes] == [MERGED]
    not_applied = [note.id for note in notes] == [source.id for source in sources]
    assert applied or not_applied
    assert not_applied  # killed before COMMIT: PostgreSQL rolled the whole merge back
    assert not MergedNoteSnapshot.objects.exists()
    assert MergeRun.objects.get().applied == []
    # The run that died holds its lease until it expires; then the person can be merged again.
    assert LongTermMemory().optimize(user, force=True).status == "skipped"
