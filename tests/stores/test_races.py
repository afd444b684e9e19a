"""Limits and duplicates hold when 8 OS processes write one person's memory at the same moment.

Each worker is a separate OS process with its own database connection, forked from one process
that set Django up once for the module (``tests/workers.py``); they all wait at a start gate,
then write at once. The data is committed (``transaction=True``) so the workers see the people
the test created.
"""

from __future__ import annotations

import os
import signal
import time
from collections import Counter
from contextlib import ExitStack
from typing import Any

import pytest
from django.db import connection, connections
from django.test import override_settings

from agent_memory.locking import ADVISORY_NAMESPACE, advisory_key, user_write_lock
from agent_memory.models import MemoryNote
from agent_memory.notes import NewNote
from agent_memory.stores.orm import DjangoStore
from tests.test_import_slots import slots_held
from tests.workers import Race, Racers

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.processes]

WORKERS = 8


@pytest.fixture(scope="module")
def racers(django_db_setup):
    """The process that forks the workers, started once for the module's races."""
    with Racers(connection.settings_dict["NAME"]) as racers:
        yield racers


@pytest.fixture
def run(racers):
    """``run(job, settings, **params)``: a race of ``WORKERS`` workers; their reports."""

    def race(job: str, settings: dict[str, Any], **params: Any) -> list[dict[str, Any]]:
        reports = racers.race(job, WORKERS, settings=settings, params=params)
        # Nothing may fail other than with a memory error kind: no "database is locked", no
        # deadlock.
        assert [error for report in reports for error in report["errors"]] == []
        assert [error for report in reports for error in report["other"]["errors"]] == []
        return reports

    return race


def refusals(reports: list[dict[str, Any]]) -> Counter[str]:
    total: Counter[str] = Counter()
    for report in reports:
        total.update(report["refused"])
    return total


def saved(reports: list[dict[str, Any]]) -> int:
    return sum(report["saved"] for report in reports)


def notes_of(user: Any) -> list[MemoryNote]:
    return list(MemoryNote.objects.filter(user=user))


def assert_counts_true(*users: Any) -> None:
    """The counts kept per person equal a recount of their notes, and every text key is right."""
    for user in users:
        check = DjangoStore().check_counts(user.pk)
        notes = notes_of(user)
        assert check.stored is not None
        assert (check.stored.notes, check.stored.chars) == (
            len(notes),
            sum(len(note.content) for note in notes),
        )
        assert check.stale_text_keys == 0 and not check.drifted


def test_racing_creates_never_pass_max_notes(make_user, run):
    person, other = make_user(), make_user()
    # 8 workers x 4 attempts = 32 notes wanted, 10 allowed; each worker also writes one note
    # for a second person in the thick of the race (8 of their 10).
    reports = run(
        "create",
        {"MAX_NOTES": 10},
        user=person.pk,
        other_user=other.pk,
        attempts=4,
    )

    assert len(notes_of(person)) == 10
    assert saved(reports) == 10
    assert refusals(reports) == {"limit_reached": 32 - 10}
    assert all("10 of 10 notes" in message for report in reports for message in report["messages"])
    # The second person's writes are unaffected: every one saved.
    assert sum(report["other"]["saved"] for report in reports) == WORKERS
    assert not any(report["other"]["refused"] for report in reports)
    assert len(notes_of(other)) == WORKERS
    assert_counts_true(person, other)


def test_racing_imports_skip_shared_notes_never_pass_max_notes_and_stay_whole(make_user, run):
    person = make_user()
    # 8 files: one note they all share and two of their own; 7 notes allowed. The first import
    # saves 3, the next two save 2 each (the shared note is skipped), the others write nothing.
    # Every import may run at once here: this is the person's lock, not the site's slots.
    reports = run(
        "import",
        {"MAX_NOTES": 7, "MAX_CONCURRENT_IMPORTS": WORKERS},
        user=person.pk,
        lines=["shared", "{worker}-a", "{worker}-b"],
    )

    notes = [note.content for note in notes_of(person)]
    assert len(notes) == 7 and notes.count("shared") == 1
    assert saved(reports) == 3 and sum(report["created"] for report in reports) == 7
    assert refusals(reports) == {"limit_reached": WORKERS - 3}
    own = Counter(content.split("-")[0] for content in notes if content != "shared")
    assert set(own.values()) == {2}


def test_racing_batches_never_pass_max_total_chars_and_stay_whole(make_user, run):
    person = make_user()
    # Each batch is 2 notes of 100 characters; 1000 characters allowed: at most 5 batches.
    reports = run(
        "create",
        {"MAX_NOTES": 200, "MAX_TOTAL_CHARS": 1000},
        user=person.pk,
        attempts=3,
        batch=2,
        text="{worker:02d}/{attempt:02d}/{index} " + "c" * 92,
    )

    notes = notes_of(person)
    assert all(len(note.content) == 100 for note in notes)
    assert sum(len(note.content) for note in notes) == 1000
    assert saved(reports) == 5
    assert refusals(reports) == {"limit_reached": WORKERS * 3 - 5}
    # All or nothing: every saved batch is there with both of its notes.
    prefixes = Counter(note.content.rsplit("/", 1)[0] for note in notes)
    assert set(prefixes.values()) == {2}
    assert_counts_true(person)


def test_racing_growth_by_updates_never_passes_max_total_chars(make_user, run):
    from agent_memory import LongTermMemory

    person = make_user()
    memory = LongTermMemory()
    own = [
        memory.create_notes(person, [{"categories": ["Race"], "content": f"grown {i}"}])[0].id
        for i in range(WORKERS)
    ]
    # Each worker grows its own note by 40 characters at a time, 5 times; the person's notes
    # may hold 600 characters, far fewer than the 8 x 200 + labels they ask for.
    reports = run(
        "grow",
        {"MAX_TOTAL_CHARS": 600},
        user=person.pk,
        notes=own,
        attempts=5,
        step=40,
    )

    notes = notes_of(person)
    total = sum(len(note.content) for note in notes)
    assert total <= 600
    assert refusals(reports)["limit_reached"] > 0
    assert set(refusals(reports)) == {"limit_reached"}
    assert saved(reports) + refusals(reports)["limit_reached"] == WORKERS * 5
    # Every saved edit is one version step: the versions account for every success.
    assert sum(note.version - 1 for note in notes) == saved(reports)
    assert_counts_true(person)


def test_racing_same_note_has_exactly_one_winner(make_user, run):
    person, other = make_user(), make_user()
    reports = run(
        "create",
        {},
        user=person.pk,
        other_user=other.pk,
        attempts=1,
        text="Prefers window seats",
        categories=["Travel"],
    )

    assert saved(reports) == 1
    assert refusals(reports) == {"duplicate": WORKERS - 1}
    (note,) = notes_of(person)
    assert note.content == "Prefers window seats"
    assert all(f"memory:{note.pk}" in m for report in reports for m in report["messages"])
    assert len(notes_of(other)) == WORKERS
    assert_counts_true(person, other)


def test_racing_rewrites_to_the_same_text_have_exactly_one_winner(make_user, run):
    from agent_memory import LongTermMemory

    person = make_user()
    memory = LongTermMemory()
    own = [
        memory.create_notes(person, [{"categories": ["Race"], "content": f"draft {i}"}])[0].id
        for i in range(WORKERS)
    ]
    reports = run("rewrite", {}, user=person.pk, notes=own, text="Prefers aisle seats")

    assert saved(reports) == 1
    assert refusals(reports) == {"duplicate": WORKERS - 1}
    rewritten = [note for note in notes_of(person) if note.content == "Prefers aisle seats"]
    assert len(rewritten) == 1 and rewritten[0].version == 2
    assert len(notes_of(person)) == WORKERS
    assert_counts_true(person)


def test_racing_creates_and_deletes_keep_the_counts_true(make_user, run):
    person = make_user()
    # Each worker saves two notes and deletes the first, 4 times over, while the others do the
    # same: 8 notes may be kept at once, so some saves are refused and retried by later rounds.
    reports = run("churn", {"MAX_NOTES": 8, "MAX_TOTAL_CHARS": 2000}, user=person.pk, attempts=4)

    notes = notes_of(person)
    assert len(notes) <= 8
    assert set(refusals(reports)) <= {"limit_reached"}
    deleted = sum(report["deleted"] for report in reports)
    assert saved(reports) - deleted == len(notes)
    assert_counts_true(person)


def advisory_waiters(user_id: Any) -> int:
    """How many sessions are waiting for this person's advisory lock right now."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted "
            "AND classid = %s AND objid = %s",
            [ADVISORY_NAMESPACE, advisory_key(user_id) & 0xFFFFFFFF],
        )
        return int(cursor.fetchone()[0])


@pytest.mark.skipif(
    connection.vendor != "postgresql", reason="SQLite has one write lock for the whole file"
)
def test_postgresql_lock_holds_back_the_same_person_only(make_user, racers):
    ann, bob = make_user(), make_user()

    def one_write(user: Any, settings: dict[str, Any]) -> Race:
        params = {"user": user.pk, "attempts": 1, "text": "from a worker"}
        return racers.start("create", 1, settings=settings, params=params)

    with ExitStack() as workers:
        with user_write_lock(ann.pk, "default"):
            DjangoStore().insert_notes(ann.pk, [NewNote(("General",), "written under the lock")])
            # Bob's write goes through while Ann's lock is held (it would hang otherwise).
            for_bob = workers.enter_context(one_write(bob, {}))
            (bob_report,) = for_bob.reports(timeout=60)
            assert bob_report["saved"] == 1
            # Ann's own writer has to wait for the lock...
            for_ann = workers.enter_context(one_write(ann, {"MAX_NOTES": 1}))
            deadline = time.monotonic() + 60
            while advisory_waiters(ann.pk) == 0:
                assert time.monotonic() < deadline, "Ann's writer never waited for the lock"
                time.sleep(0.05)
        # ...and, once it has the lock, sees the note committed under it: Ann's memory is full.
        (ann_report,) = for_ann.reports(timeout=60)
    assert ann_report["errors"] == []
    assert ann_report["refused"] == {"limit_reached": 1}
    assert [note.content for note in notes_of(ann)] == ["written under the lock"]
    assert [note.content for note in notes_of(bob)] == ["from a worker"]


# --- the lock's parts, in one process ------------------------------------------------------


@pytest.mark.parametrize("user_id", [1, 2**31 - 1, 2**31, 2**63 - 1, "a1b2", "9f1c2d3e-uuid"])
def test_advisory_key_is_a_stable_signed_32_bit_number(user_id):
    key = advisory_key(user_id)
    assert -(2**31) <= key < 2**31
    assert key == advisory_key(user_id)


def test_advisory_key_is_the_primary_key_itself_when_it_fits():
    assert [advisory_key(n) for n in (1, 42, 2**31 - 1)] == [1, 42, 2**31 - 1]
    assert advisory_key(2**31) != advisory_key(2**31 + 1)


def test_row_lock_for_other_databases_creates_then_bumps_the_persons_row(make_user, monkeypatch):
    from agent_memory.models import MemoryUserLock

    ann, bob = make_user(), make_user()
    # The branch for databases without advisory locks (SQLite ignores FOR UPDATE).
    monkeypatch.setattr(connections["default"], "vendor", "other")
    for _ in range(3):
        with user_write_lock(ann.pk, "default"):
            pass
    with user_write_lock(bob.pk, "default"):
        pass
    rows = dict(MemoryUserLock.objects.values_list("user_id", "writes"))
    assert rows == {ann.pk: 3, bob.pk: 1}


def test_racing_imports_on_every_process_never_run_more_at_once_than_the_slots(run):
    # 8 processes each take an import slot and hold it until all 8 have tried: 3 may.
    reports = run("slot", {"MAX_CONCURRENT_IMPORTS": 3}, workers=WORKERS)

    assert saved(reports) == 3
    assert refusals(reports) == {"busy": WORKERS - 3}
    # Each holder gave its slot back when it was done: all three are free again.
    with override_settings(AGENT_MEMORY={"MAX_CONCURRENT_IMPORTS": 3}), slots_held(4) as took:
        assert took == [True, True, True, False]


def test_an_import_slot_held_by_a_killed_process_is_free_again(racers):
    with racers.start(
        "slot", 1, settings={"MAX_CONCURRENT_IMPORTS": 1}, params={"workers": 1, "hold": True}
    ) as running:
        deadline = time.monotonic() + 60
        while not (running.gate / "held-0").exists():
            assert time.monotonic() < deadline, "the worker never took the slot"
            time.sleep(0.01)
        with DjangoStore().import_slot(1) as free:
            assert not free
        os.kill(running.pids[0], signal.SIGKILL)
        # The database (the PostgreSQL session) or the kernel (the lock file) lets go of it.
        while True:
            with DjangoStore().import_slot(1) as free:
                if free:
                    break
            assert time.monotonic() < deadline, "the killed process's slot stayed taken"
            time.sleep(0.01)
