"""A real server under a burst of writes while PostgreSQL drops its connections.

gunicorn serves the example project's URLs (two sync workers, connections kept for a minute
and health-checked, ``DEBUG`` off) on the test database. Several client processes sign in like
browsers and write notes as fast as they can, deleting some, while the test terminates every
server connection with ``pg_terminate_backend`` in a loop. Every answer must be one of the
documented ones (a JSON 503 ``unavailable`` when the database went away, never a 500 or an HTML
page), nothing confirmed may be lost or half-written, nothing unasked may appear, and the limits
hold. Afterwards, with the database back, the next requests on the killed connections succeed.

Every process is started in its own process group and killed as a group at the end.
"""

from __future__ import annotations

import json
import os
import random
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from django.db import connection

from agent_memory.models import MemoryNote
from tests import processes
from tests.http_clients import API, Session
from tests.test_faults import side_connection

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.processes]

ROOT = Path(__file__).resolve().parent.parent
SERVER_NAME = f"agent_memory_fault_server_{os.getpid()}"
CLIENTS = 4
WRITES = 40  # per client
MAX_NOTES = 30  # fewer than the writes: the limit is reached during the burst
CATEGORIES = ["Burst"]
KILL_EVERY = (0.02, 0.1)  # seconds between two rounds of pg_terminate_backend


class ConnectionKiller(threading.Thread):
    """Terminates every connection of the server (found by application name) in a loop."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.stopping = threading.Event()
        self.killed = 0
        self.rounds = 0

    def run(self) -> None:
        while not self.stopping.is_set():
            self.killed += kill_server_connections()
            self.rounds += 1
            self.stopping.wait(random.uniform(*KILL_EVERY))


def kill_server_connections() -> int:
    with side_connection() as killer:
        (count,) = killer.execute(
            "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE application_name = %s",
            [SERVER_NAME],
        ).fetchone()
    return count


@pytest.fixture
def server(tmp_path):
    """gunicorn on a free loopback port, on the test database; yields the port."""
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL: pg_terminate_backend drops the server's connections")
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.server_settings",
        "AGENT_MEMORY_TEST_DB": connection.settings_dict["NAME"],
        "AGENT_MEMORY_SERVER_NAME": SERVER_NAME,
        "AGENT_MEMORY_SERVER_SETTINGS": json.dumps({"MAX_NOTES": MAX_NOTES, "OPTIMIZER": False}),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    log = tmp_path / "server.log"
    with processes.gunicorn(env, log, answers, timeout=30, options=("--access-logfile=-",)) as port:
        yield port, env, log


def answers(port: int) -> bool:
    return Session("127.0.0.1", port).request("GET", "/accounts/login/")[0] == 200


def run_clients(port: int, env: dict[str, str], username: str) -> list[dict]:
    """The burst: CLIENTS processes signed in as ``username``, started together."""
    with tempfile.TemporaryDirectory(prefix="agent-memory-burst-") as gate:
        clients = [
            processes.launch(
                [
                    sys.executable,
                    "-m",
                    "tests.http_clients",
                    json.dumps(
                        {
                            "port": port,
                            "username": username,
                            "password": "pw-for-tests",
                            "client": index,
                            "count": WRITES,
                            "categories": CATEGORIES,
                            "gate": gate,
                        }
                    ),
                ],
                env,
            )
            for index in range(CLIENTS)
        ]
        killer = ConnectionKiller()
        try:
            deadline = time.monotonic() + 30
            while len(list(Path(gate).glob("ready-*"))) < CLIENTS:
                for client in clients:
                    if client.poll() is not None:
                        raise AssertionError(f"a client failed to start:\n{client.stderr.read()}")
                assert time.monotonic() < deadline, "clients did not sign in in time"
                time.sleep(0.02)
            killer.start()
            (Path(gate) / "go").touch()
            records = []
            for client in clients:
                out, err = client.communicate(timeout=60)
                assert client.returncode == 0, err
                records.extend(json.loads(out.strip().splitlines()[-1]))
        finally:
            killer.stopping.set()
            if killer.is_alive():
                killer.join(timeout=10)
            processes.stop(clients, grace=5)
    print(f"killed {killer.killed} server connections in {killer.rounds} rounds")
    assert killer.killed >= 5, "the connections were hardly dropped: the test proved nothing"
    return records


def test_dropped_connections_during_a_burst_answer_in_shape_and_lose_nothing(server, make_user):
    port, env, log = server
    person = make_user()

    records = run_clients(port, env, person.username)

    statuses = Counter((record.get("op"), record["status"]) for record in records)
    print("answers by operation and status:", dict(sorted(statuses.items(), key=str)))
    problems = [record for record in records if record["problem"]]
    assert problems == [], problems[:5]
    assert not any(record["status"] in (None, 500) for record in records)

    # No lost or half-written note; nothing that was not asked for.
    stored = {note.content: note for note in MemoryNote.objects.filter(user=person).order_by("pk")}
    attempted = {record["content"] for record in records if record.get("op") == "create"}
    assert set(stored) <= attempted
    deleted = {
        record["content"]
        for record in records
        if record["op"] == "delete" and record["status"] == 204
    }
    unsure = {  # a delete that answered 503 may or may not have happened before the link went
        record["content"]
        for record in records
        if record["op"] == "delete" and record["status"] != 204
    }
    for record in records:
        if record["op"] != "create" or record["status"] != 201:
            continue
        content, answered = record["content"], record["body"]["note"]
        assert answered["content"] == content and answered["categories"] == CATEGORIES
        if content in deleted:
            assert content not in stored, content
        elif content not in unsure:
            note = stored.get(content)
            assert note is not None, f"confirmed note lost: {content}"
            assert (note.pk, note.version, note.categories, note.source) == (
                answered["id"],
                1,
                CATEGORIES,
                "person",
            )
    assert len(stored) <= MAX_NOTES
    assert len(stored) == len(set(note.content.casefold() for note in stored.values()))
    assert statuses[("create", 201)] > 0

    # The database is back: requests on the connections the workers kept (all killed once
    # more now) are served on fresh ones thanks to the health checks.
    kill_server_connections()
    after = Session("127.0.0.1", port)
    after.login(person.username, "pw-for-tests")
    for _ in range(6):
        listed = after.api("GET", API)
        assert (listed["status"], listed["problem"]) == (200, None)
    assert len(listed["body"]["notes"]) == len(stored)
    assert " 500 " not in log.read_text()
