"""Faults: the database connection dropped in the middle of a write, a model that hangs.

Nothing is lost and nothing is half-written, and the next operation succeeds. (A worker killed
with SIGKILL during a merge is covered by the optimizer's own tests.)

The connection is dropped for real: on PostgreSQL another connection terminates our backend
with ``pg_terminate_backend`` while the write transaction holds the person's lock; on SQLite the
driver's connection is closed under Django's feet. Either way Django learns of it only from the
failing statement, as it would from a network failure, and the next operation reconnects by
itself.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from datetime import timedelta

import pytest
from django.db import Error, connection
from django.utils import timezone

from agent_memory import LongTermMemory
from agent_memory.models import MemoryNote, MergeRun
from agent_memory.stores.orm import DjangoStore
from agent_memory.stores.orm_sql import batches_on


def side_connection():
    """A separate autocommit psycopg connection to the test database (PostgreSQL only)."""
    psycopg = pytest.importorskip("psycopg")  # the [postgres] extra

    params = connection.get_connection_params()
    return psycopg.connect(
        dbname=params.get("dbname") or connection.settings_dict["NAME"],
        user=params.get("user"),
        host=params.get("host"),
        port=params.get("port"),
        password=params.get("password"),
        autocommit=True,
    )


def drop_connection() -> None:
    """Kill the default connection's link to the database mid-transaction."""
    if connection.vendor == "postgresql":
        backend_pid = connection.connection.info.backend_pid
        with side_connection() as killer:
            # With a timeout, PostgreSQL waits until the backend is really gone.
            row = killer.execute("SELECT pg_terminate_backend(%s, 10000)", [backend_pid]).fetchone()
            assert row == (True,)
    else:
        connection.connection.close()


class DroppingStore(DjangoStore):
    """A ``DjangoStore`` that loses its connection half-way through a write."""

    def __init__(self, drop: Callable[[], None]) -> None:
        super().__init__()
        self.drop = drop

    # The store's own steps, under its lock, in the write's transaction.

    def _insert(self, user_id, notes):
        # The first row is written inside the transaction, then the link goes.
        written = super()._insert(user_id, notes[:1])
        self.drop()
        return written + super()._insert(user_id, notes[1:])

    def _update(self, user_id, current, note):
        # The UPDATE has run; the connection dies before the transaction commits.
        updated = super()._update(user_id, current, note)
        self.drop()
        return updated

    # On PostgreSQL a checked write runs its statements in one batch with the lock, before the
    # check: the link goes while the check runs, after the writes, before the commit.

    def insert_notes_checked(self, user_id, notes, check):
        return super().insert_notes_checked(user_id, notes, self._dropping(check))

    def update_note_checked(self, user_id, note_id, version, note, check):
        return super().update_note_checked(user_id, note_id, version, note, self._dropping(check))

    def _dropping(self, check):
        if not batches_on(self.using):
            return check

        def check_then_drop(*args):
            check(*args)
            self.drop()

        return check_then_drop


def snapshot(user_id) -> list[tuple]:
    return list(
        MemoryNote.objects.filter(user_id=user_id)
        .order_by("id")
        .values_list("id", "version", "content", "categories")
    )


@pytest.fixture
def person(django_user_model):
    return django_user_model.objects.create_user(username="faulty", password="pw-for-tests")


@pytest.fixture
def memory() -> LongTermMemory:
    return LongTermMemory(optimizer=False)


BATCH = [
    {"categories": ["Work"], "content": "Works on the billing service."},
    {"categories": ["Food"], "content": "Does not eat peanuts."},
    {"categories": ["Travel"], "content": "Goes to Lisbon every spring."},
]


@pytest.mark.django_db(transaction=True)
def test_connection_dropped_during_a_create_batch_writes_nothing_and_the_next_create_succeeds(
    person, memory
):
    memory.create_notes(person, [{"categories": ["Language"], "content": "Prefers English."}])
    before = snapshot(person.pk)
    dropping = LongTermMemory(store=DroppingStore(drop_connection), optimizer=False)
    link_before = connection.connection

    with pytest.raises(Error):
        dropping.create_notes(person, BATCH)

    # No reconnect by hand: the failed rollback made Django drop the dead connection, so the
    # next query opens a new one.
    assert snapshot(person.pk) == before, "a half-written batch survived the dropped connection"
    created = memory.create_notes(person, BATCH)
    assert [note.content for note in created] == [item["content"] for item in BATCH]
    assert len(snapshot(person.pk)) == len(before) + len(BATCH)
    assert connection.connection is not link_before, "the write went over the dropped link"


@pytest.mark.django_db(transaction=True)
def test_connection_dropped_before_an_update_commits_keeps_the_old_version(person, memory):
    (note,) = memory.create_notes(person, [{"categories": ["Food"], "content": "Likes tea."}])
    before = snapshot(person.pk)
    dropping = LongTermMemory(store=DroppingStore(drop_connection), optimizer=False)

    with pytest.raises(Error):
        dropping.update_note(person, note.id, note.version, ["Food"], "Likes green tea.")

    assert snapshot(person.pk) == before, "the update was half-applied"
    # The caller still holds the version it read, and that version still works.
    updated = memory.update_note(person, note.id, note.version, ["Food"], "Likes green tea.")
    assert (updated.version, updated.content) == (note.version + 1, "Likes green tea.")


@pytest.mark.django_db(transaction=True)
def test_connection_dropped_inside_the_check_releases_the_person_lock(person, memory):
    """The drop comes while the person's lock is held; a later writer must not wait forever."""

    class DroppingInCheck(DjangoStore):
        def insert_notes_checked(self, user_id, notes, check):
            def check_then_drop(existing):
                check(existing)
                drop_connection()

            return super().insert_notes_checked(user_id, notes, check_then_drop)

    dropping = LongTermMemory(store=DroppingInCheck(), optimizer=False)
    with pytest.raises(Error):
        dropping.create_notes(person, BATCH[:1])

    assert snapshot(person.pk) == []
    if connection.vendor == "postgresql":
        # A short lock timeout: a lock left behind would fail this at once, not hang the suite.
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = '5s'")
    assert len(memory.create_notes(person, BATCH[:1])) == 1


# --- a model that never answers -----------------------------------------------------------------


class SilentServer:
    """Accepts connections on 127.0.0.1 and reads the request, but never answers it."""

    def __init__(self) -> None:
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen()
        self.port = self.listener.getsockname()[1]
        self.stopped = threading.Event()
        self.accepted = 0
        self.held: list[socket.socket] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        self.listener.settimeout(0.1)
        while not self.stopped.is_set():
            try:
                client, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.accepted += 1
            self.held.append(client)  # kept open, never written to

    def close(self) -> None:
        self.stopped.set()
        self.thread.join(timeout=5)
        for client in self.held:
            client.close()
        self.listener.close()


@pytest.fixture
def silent_model(settings) -> Iterator[SilentServer]:
    server = SilentServer()
    settings.AGENT_MEMORY = {
        "MODELS": {
            "default": {
                "BACKEND": "agent_memory.optimizer.backends.OpenAICompatibleBackend",
                "OPTIONS": {
                    "model": "hangs",
                    "base_url": f"http://127.0.0.1:{server.port}/v1",
                    "timeout": 0.5,
                },
            }
        },
    }
    yield server
    server.close()


@pytest.mark.django_db
def test_model_that_hangs_past_its_timeout_fails_the_run_and_loses_no_note(person, silent_model):
    memory = LongTermMemory()
    memory.create_notes(
        person,
        [
            {"categories": ["Food"], "content": "Likes green tea in the morning."},
            {"categories": ["Food"], "content": "Drinks green tea every morning."},
            {"categories": ["Work"], "content": "Works on the billing service."},
        ],
    )
    before = snapshot(person.pk)
    started = timezone.now()

    result = memory.optimize(person, force=True)

    assert silent_model.accepted == 1, "the backend never called the model server"
    assert result.status == "failed"
    assert "model call failed" in result.reason
    run = MergeRun.objects.get(pk=result.run_id)
    assert run.status == "failed" and "model call failed" in run.error
    assert run.finished_at is not None, "the run still holds its lease"
    state = memory.optimizer_state(person)
    assert state["consecutive_failures"] == 1
    assert state["last_success_at"] is None
    # First failure: the next run waits an hour.
    assert started + timedelta(minutes=59) <= state["next_run_at"]
    assert state["next_run_at"] <= timezone.now() + timedelta(minutes=61)
    assert snapshot(person.pk) == before
    assert memory.optimize(person).status == "skipped", "a failed run must back off"

    second = memory.optimize(person, force=True)
    assert second.status == "failed"
    state = memory.optimizer_state(person)
    assert state["consecutive_failures"] == 2
    assert state["next_run_at"] >= started + timedelta(hours=5, minutes=59)
    assert snapshot(person.pk) == before
    # The person's memory still works normally.
    assert memory.create_notes(person, [{"categories": ["Work"], "content": "Uses Go."}])
