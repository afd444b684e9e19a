"""load: the example project under gunicorn on PostgreSQL, driven through the HTTP API.

Sixteen clients on 127.0.0.1, two per person for eight people, each send a fixed number of
requests in a realistic mix: list, create, update, delete, and "search". The HTTP API has no
search (the agent searches through its tool), so a search here is what the memory screen does
to find a note: a GET of the list. Two clients share each person, so they race on the same
notes (409 ``stale_version``), on the person's limits (409 ``limit_reached``: people start close
to ``MAX_NOTES`` and ``MAX_TOTAL_CHARS``) and now and then on the same text (409
``duplicate``). Those 409s are the expected answers; anything else is an error.

Afterwards every person's notes are checked in the database: the limits hold, no two notes
duplicate each other, every note's version is 1 plus the updates that succeeded on it (no lost
or doubled update), every note a client created exists unless it deleted it, and nothing else;
and every person's stored counts equal a recount of their notes.

The same clients then run the same mix against the floor (:mod:`benchmarks.floor`): a minimal DRF
API doing one plain ORM statement a request, served by the same gunicorn from the same database,
for people of their own. Our throughput is reported as a share of the floor's.
"""

from __future__ import annotations

import collections
import http.client
import json
import os
import random
import secrets
import signal
import socket
import statistics
import string
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from .environment import Environment
from .floor import BASE as FLOOR_BASE
from .people import stored_note
from .report import Row

BASE = "/api/chat/memory"
ROOT = Path(__file__).resolve().parent.parent
#: op → weight of the mix.
MIX = {"list": 30, "search": 10, "create": 25, "update": 25, "delete": 10}


@dataclass
class Sizes:
    persons: int = 8
    clients: int = 16
    requests: int = 3200
    workers: int = 4
    seed_notes: int = 180
    #: A bound in time too: clients stop early on a machine too busy to finish (reported).
    deadline_s: float = 240


SMOKE = Sizes(persons=2, clients=4, requests=120, workers=2, seed_notes=10, deadline_s=60)


@dataclass
class Outcome:
    """What one request did."""

    op: str
    status: int
    seconds: float
    kind: str = ""


@dataclass
class Person:
    """What the clients of one person saw succeed, to check against the database."""

    user_id: int
    cookie: str
    csrf: str
    seeded: set[int] = field(default_factory=set)
    created: list[int] = field(default_factory=list)
    deleted: list[int] = field(default_factory=list)
    updates: dict[int, list[int]] = field(default_factory=lambda: collections.defaultdict(list))
    #: A client saw a note's version go down (it must only ever go up).
    went_back: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def run(env: Environment, *, smoke: bool = False) -> list[Row]:
    if not env.has_postgres:
        return [Row("load", "skipped: needs PostgreSQL", "-")]
    sizes = SMOKE if smoke else Sizes()
    people = _prepare_people(sizes, "load")
    floor_people = _prepare_people(sizes, "floor")
    port = _free_port()
    log_path = os.path.join(env.folder, "gunicorn.log")
    server = _start_server(env, port, sizes.workers, log_path)
    try:
        _wait_until_up(port, server, log_path)
        outcomes, elapsed = _timed(port, people, sizes, BASE)
        floor_outcomes, floor_elapsed = _timed(port, floor_people, sizes, FLOOR_BASE)
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    problems = _check_invariants(people)
    rows = _rows(outcomes, elapsed, problems, people, sizes, log_path)
    return rows + _floor_rows(outcomes, elapsed, floor_outcomes, floor_elapsed)


def _timed(port: int, people: list[Person], sizes: Sizes, base: str) -> tuple[list[Outcome], float]:
    for person in people:  # each worker opens its connection before the clock starts
        _request(port, person, "GET", base)
    started = time.perf_counter()
    outcomes = _drive(port, people, sizes, base)
    return outcomes, time.perf_counter() - started


# --- setting up -------------------------------------------------------------------------------


def _prepare_people(sizes: Sizes, prefix: str) -> list[Person]:
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.sessions.backends.db import SessionStore
    from django.contrib.sessions.models import Session
    from django.utils import timezone

    from agent_memory import LongTermMemory
    from agent_memory.stores.orm import DjangoStore

    from .people import fill, make_person, notes

    alias = "postgresql"
    memory = LongTermMemory(store=DjangoStore(using=alias), optimizer=False)
    people = []
    for number in range(sizes.persons):
        user = make_person(alias, f"{prefix}-{number}")
        # Notes of 180–300 characters: people near MAX_NOTES are near MAX_TOTAL_CHARS too.
        rng = random.Random(number)
        items = []
        for index, item in enumerate(notes(sizes.seed_notes, 180, seed=100 + number)):
            items.append({**item, "content": _text(rng, f"seed {number}.{index}")})
        fill(memory, user.pk, items)
        # A logged-in browser session, made the way django.contrib.auth.login makes one.
        data = {
            SESSION_KEY: str(user.pk),
            BACKEND_SESSION_KEY: "django.contrib.auth.backends.ModelBackend",
            HASH_SESSION_KEY: user.get_session_auth_hash(),
        }
        key = "".join(secrets.choice(string.ascii_lowercase + string.digits) for _ in range(32))
        Session.objects.using(alias).create(
            session_key=key,
            session_data=SessionStore().encode(data),
            expire_date=timezone.now() + timedelta(days=1),
        )
        csrf = "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(32))
        person = Person(user.pk, f"sessionid={key}; csrftoken={csrf}", csrf)
        person.seeded = {note.id for note in memory.notes(user.pk)}
        people.append(person)
    return people


def _text(rng: random.Random, tag: str) -> str:
    words = (
        "prefers morning meetings keeps notes in plain text files reviews designs on paper "
        "drinks tea not coffee travels by train plans releases around school holidays likes "
        "small pull requests and asks for examples before explanations"
    ).split()
    length = rng.randint(180, 300)
    text = f"About {tag}: the person"
    while len(text) < length:
        text += " " + rng.choice(words)
    return text[:length].rstrip() + "."


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _start_server(env: Environment, port: int, workers: int, log_path: str) -> subprocess.Popen:
    assert env.postgres_url
    environ = {
        **os.environ,
        # The example project, plus the floor's URLs.
        "DJANGO_SETTINGS_MODULE": "benchmarks.floor_settings",
        "DATABASE_URL": env.postgres_url,
        "DJANGO_DEBUG": "0",
    }
    command = [
        sys.executable,
        "-m",
        "gunicorn",
        "--workers",
        str(workers),
        "--bind",
        f"127.0.0.1:{port}",
        "--log-level",
        "warning",
        "example_project.wsgi:application",
    ]
    with open(log_path, "wb") as log:
        return subprocess.Popen(command, cwd=ROOT, env=environ, stdout=log, stderr=log)


def _wait_until_up(port: int, server: subprocess.Popen, log_path: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"gunicorn exited: {Path(log_path).read_text()[-2000:]}")
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            connection.request("GET", BASE)
            connection.getresponse().read()
            connection.close()
            return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError("gunicorn did not answer within 60 s")


# --- the clients ------------------------------------------------------------------------------


def _request(
    port: int, person: Person, method: str, path: str, body: Any = None
) -> tuple[int, Any, float]:
    headers = {"Cookie": person.cookie, "Host": "127.0.0.1", "Accept": "application/json"}
    payload = None
    if body is not None:
        payload = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    if method != "GET":
        headers["X-CSRFToken"] = person.csrf
    start = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection.request(method, path, body=payload, headers=headers)
        response = connection.getresponse()
        raw = response.read()
    finally:
        connection.close()
    seconds = time.perf_counter() - start
    try:
        data = json.loads(raw) if raw else None
    except ValueError:
        data = raw[:300].decode(errors="replace")
    return response.status, data, seconds


def _drive(port: int, people: list[Person], sizes: Sizes, base: str) -> list[Outcome]:
    outcomes: list[Outcome] = []
    guard = threading.Lock()
    per_client = sizes.requests // sizes.clients
    deadline = time.monotonic() + sizes.deadline_s

    def client(number: int) -> None:
        person = people[number % len(people)]
        rng = random.Random(1000 + number)
        mine = _Client(port, person, rng, number, base)
        done = []
        for _ in range(per_client):
            if time.monotonic() > deadline:
                break
            done.append(mine.step())
        with guard:
            outcomes.extend(done)

    threads = [threading.Thread(target=client, args=(n,)) for n in range(sizes.clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes


class _Client:
    """One browser tab of a person: remembers the versions it last saw, like the screen does."""

    def __init__(
        self, port: int, person: Person, rng: random.Random, number: int, base: str
    ) -> None:
        self.port, self.person, self.rng, self.number = port, person, rng, number
        self.base = base
        self.seen: dict[int, dict[str, Any]] = {}  # the person's notes as last listed
        self.mine: dict[int, int] = {}  # notes this client created → their version
        self.last_seen: dict[int, int] = {}  # every note's highest version seen so far
        self.counter = 0
        self.ops = list(MIX)
        self.weights = [MIX[op] for op in self.ops]

    def step(self) -> Outcome:
        op = self.rng.choices(self.ops, self.weights)[0]
        if not self.seen:
            op = "list"
        if op == "delete" and not self.mine:
            op = "search"
        return getattr(self, f"_{op}")()

    def _observe(self, note: dict[str, Any]) -> None:
        before = self.last_seen.get(note["id"], 0)
        if note["version"] < before:
            with self.person.lock:
                self.person.went_back.append(
                    f"memory:{note['id']} went from version {before} to {note['version']}"
                )
        self.last_seen[note["id"]] = max(before, note["version"])

    def _send(self, op: str, method: str, path: str, body: Any = None) -> tuple[Outcome, Any]:
        status, data, seconds = _request(self.port, self.person, method, path, body)
        kind = ""
        if isinstance(data, dict) and isinstance(data.get("error"), dict):
            kind = str(data["error"].get("kind", ""))
        elif status >= 400:
            kind = str(data)[:200]
        return Outcome(op, status, seconds, kind), data

    def _list(self, op: str = "list") -> Outcome:
        outcome, data = self._send(op, "GET", self.base)
        if outcome.status == 200:
            self.seen = {note["id"]: note for note in data["notes"]}
            for note in data["notes"]:
                self._observe(note)
            for note_id in list(self.mine):
                if note_id in self.seen:
                    self.mine[note_id] = self.seen[note_id]["version"]
        return outcome

    def _search(self) -> Outcome:
        return self._list("search")

    def _create(self) -> Outcome:
        if self.rng.random() < 0.05:
            # Save again what is already there: the answer must be 409 duplicate.
            note = self.seen[self.rng.choice(sorted(self.seen))]
            body = {"categories": note["categories"], "content": note["content"]}
        else:
            self.counter += 1
            tag = f"client {self.number} note {self.counter}"
            body = {"categories": ["Load"], "content": _text(self.rng, tag)}
        outcome, data = self._send("create", "POST", self.base, body)
        if outcome.status == 201:
            note = data["note"]
            self.mine[note["id"]] = note["version"]
            with self.person.lock:
                self.person.created.append(note["id"])
        return outcome

    def _update(self) -> Outcome:
        shared = [i for i in self.seen if i in self.person.seeded]
        if self.mine and (self.rng.random() < 0.3 or not shared):
            note_id = self.rng.choice(sorted(self.mine))
            version, categories = self.mine[note_id], ["Load"]
        else:
            note_id = self.rng.choice(sorted(shared))
            version, categories = self.seen[note_id]["version"], self.seen[note_id]["categories"]
        self.counter += 1
        body = {
            "categories": categories,
            "content": _text(self.rng, f"client {self.number} edit {self.counter}"),
            "version": version,
        }
        outcome, data = self._send("update", "PATCH", f"{self.base}/{note_id}", body)
        if outcome.status == 200:
            note = data["note"]
            self._observe(note)
            if note_id in self.mine:
                self.mine[note_id] = note["version"]
            elif note_id in self.seen:
                self.seen[note_id] = note
            with self.person.lock:
                self.person.updates[note_id].append(note["version"])
        return outcome

    def _delete(self) -> Outcome:
        note_id = self.rng.choice(sorted(self.mine))
        outcome, _ = self._send(
            "delete", "DELETE", f"{self.base}/{note_id}?version={self.mine[note_id]}"
        )
        if outcome.status == 204:
            del self.mine[note_id]
            with self.person.lock:
                self.person.deleted.append(note_id)
        return outcome


# --- afterwards -------------------------------------------------------------------------------

EXPECTED = {"list": {200}, "search": {200}, "create": {201}, "update": {200}, "delete": {204}}


def _unexpected(outcome: Outcome) -> bool:
    return outcome.status not in EXPECTED[outcome.op] and outcome.status != 409


def _check_invariants(people: list[Person]) -> list[str]:
    from agent_memory import rules
    from agent_memory.conf import memory_settings
    from agent_memory.locking import Tally, stored_tally
    from agent_memory.models import MemoryNote

    limits = memory_settings.limits
    problems: list[str] = []
    every_id: list[int] = []
    for person in people:
        rows = list(MemoryNote.objects.using("postgresql").filter(user_id=person.user_id))
        name = f"person {person.user_id}"
        ids = {row.pk for row in rows}
        every_id.extend(person.created)
        if len(rows) > limits.max_notes:
            problems.append(f"{name}: {len(rows)} notes > MAX_NOTES {limits.max_notes}")
        chars = sum(len(row.content) for row in rows)
        if chars > limits.max_total_chars:
            problems.append(f"{name}: {chars} chars > MAX_TOTAL_CHARS {limits.max_total_chars}")
        notes = [stored_note(row) for row in rows]
        for index, note in enumerate(notes):
            for other in notes[index + 1 :]:
                if rules.is_duplicate(note.categories, note.content, other):
                    problems.append(f"{name}: memory:{note.id} duplicates memory:{other.id}")
        for row in rows:
            done = person.updates.get(row.pk, [])
            if row.version != 1 + len(done):
                problems.append(
                    f"{name}: memory:{row.pk} is at version {row.version} after "
                    f"{len(done)} successful updates"
                )
        problems.extend(f"{name}: {seen}" for seen in person.went_back)
        for note_id, versions in person.updates.items():
            if len(set(versions)) != len(versions):
                problems.append(f"{name}: memory:{note_id}: two updates answered one version")
        stored = stored_tally(person.user_id, "postgresql")
        if stored != Tally(len(rows), chars):
            problems.append(f"{name}: stored counts {stored} but {len(rows)} notes, {chars} chars")
        expected = (person.seeded | set(person.created)) - set(person.deleted)
        if ids != expected:
            missing, extra = sorted(expected - ids)[:5], sorted(ids - expected)[:5]
            problems.append(f"{name}: missing {missing}, unexpected {extra}")
    if len(set(every_id)) != len(every_id):
        problems.append("a note id was handed out twice")
    return problems


def _latency(outcomes: list[Outcome]) -> tuple[float, float]:
    """p50 and p99 seconds."""
    latencies = sorted(outcome.seconds for outcome in outcomes)
    p99 = latencies[min(len(latencies) - 1, round(0.99 * (len(latencies) - 1)))]
    return statistics.median(latencies), p99


def _floor_rows(
    outcomes: list[Outcome], elapsed: float, floor: list[Outcome], floor_elapsed: float
) -> list[Row]:
    ours_rps, floor_rps = len(outcomes) / elapsed, len(floor) / floor_elapsed
    share = ours_rps / floor_rps
    (p50, p99), (floor_p50, floor_p99) = _latency(outcomes), _latency(floor)
    broken = [o for o in floor if o.status not in EXPECTED[o.op] and o.status != 409]
    figures = {
        "floor_requests": len(floor),
        "floor_seconds": floor_elapsed,
        "floor_throughput_rps": floor_rps,
        "floor_p50_s": floor_p50,
        "floor_p99_s": floor_p99,
        "floor_unexpected_count": len(broken),
        "share_of_floor": share,
    }
    return [
        Row(
            "load",
            "floor: the same mix against a bare DRF view, one ORM statement a request",
            f"{floor_rps:,.0f} req/s",
            f"p50 / p99 {floor_p50 * 1000:.1f} / {floor_p99 * 1000:.1f} ms "
            f"(ours {p50 * 1000:.1f} / {p99 * 1000:.1f} ms), {len(broken)} errors",
            figures=figures,
        ),
        Row(
            "load",
            "our throughput as a share of the floor's",
            f"{share:.0%}",
            f"{ours_rps:,.0f} of {floor_rps:,.0f} req/s",
            target=">= 50%",
            ok=share >= 0.5,
        ),
    ]


def _rows(
    outcomes: list[Outcome],
    elapsed: float,
    problems: list[str],
    people: list[Person],
    sizes: Sizes,
    log_path: str,
) -> list[Row]:
    p50, p99 = _latency(outcomes)
    throughput = len(outcomes) / elapsed
    expected_409 = collections.Counter(o.kind for o in outcomes if o.status == 409)
    unexpected = [o for o in outcomes if _unexpected(o)]
    ops = collections.Counter(o.op for o in outcomes)
    ok = collections.Counter(o.op for o in outcomes if o.status in EXPECTED[o.op])
    setup = (
        f"gunicorn {sizes.workers} workers, PostgreSQL, {sizes.clients} clients / "
        f"{sizes.persons} persons, {len(outcomes):,} requests"
    )
    planned = sizes.requests // sizes.clients * sizes.clients
    if len(outcomes) < planned:
        setup += f" (stopped at the {sizes.deadline_s:.0f} s bound, of {planned:,} planned)"
    figures = {
        "requests": len(outcomes),
        "planned": planned,
        "seconds": elapsed,
        "throughput_rps": throughput,
        "p50_s": p50,
        "p99_s": p99,
        "mix": dict(ops),
        "succeeded": dict(ok),
        "expected_409": dict(expected_409),
        "unexpected": [{"op": o.op, "status": o.status, "kind": o.kind} for o in unexpected[:20]],
        "unexpected_count": len(unexpected),
        "invariant_problems": problems,
        "notes_created": sum(len(p.created) for p in people),
        "notes_deleted": sum(len(p.deleted) for p in people),
        "updates_succeeded": sum(len(v) for p in people for v in p.updates.values()),
    }
    if unexpected:
        tail = Path(log_path).read_text(errors="replace")[-3000:]
        print(f"load: unexpected answers, server log tail:\n{tail}", file=sys.stderr)
    mix = ", ".join(f"{op} {ops[op]}" for op in MIX)
    found = ", ".join(f"{kind} {count}" for kind, count in sorted(expected_409.items()))
    return [
        Row(
            "load",
            f"{setup}: throughput",
            f"{throughput:,.0f} req/s",
            f"mix: {mix}",
            figures=figures,
        ),
        Row("load", "latency p50 / p99", f"{p50 * 1000:.1f} / {p99 * 1000:.1f} ms"),
        Row(
            "load",
            "unexpected errors (409s are expected)",
            f"{len(unexpected)}",
            f"409: {found or 'none'}",
            target="0",
            ok=not unexpected,
        ),
        Row(
            "load",
            "invariants: limits, no duplicates, versions only go up (= 1 + updates), no lost "
            "notes, counts = recount",
            "hold" if not problems else f"{len(problems)} broken: {problems[0]}",
            f"{len(people)} persons checked",
            target="hold",
            ok=not problems,
        ),
    ]
