"""import: what an import costs, and what four of the largest do to another person's reads.

- **Linear cost**: ``LongTermMemory.import_notes`` of 1,000 and of 3,000 notes (limits raised to
  let them in), in process on each database; the time ratio is ≈ 3 when the cost is linear
  (every note checked once, duplicates found through folded-text keys).
- **Bounds**, through the HTTP API of the example project under gunicorn on PostgreSQL: a 10 MB
  text body is refused (400, unread) and a 3,000-line body with ``limit_reached`` before any
  note is checked; the seconds each answer took.
- **Another person's reads**: one client's ``GET memory`` p50 / p99 alone, then while four
  clients (four people) import as much as an import may be, over and over: a 1 MB text body
  (the cap: read, then refused as too many notes) and a full memory (200 notes, accepted),
  then ``DELETE memory`` to start again. The site runs ``MAX_CONCURRENT_IMPORTS`` imports at
  once (the example's default, 1); an importer answered ``429`` waits its ``Retry-After``, as
  a client should, and tries again. The row counts the imports that ran and the 429s.
"""

from __future__ import annotations

import collections
import http.client
import json
import os
import signal
import statistics
import subprocess
import threading
import time
from typing import Any

from .environment import Environment, label
from .load import (
    BASE,
    Person,
    Sizes,
    _free_port,
    _prepare_people,
    _request,
    _start_server,
    _wait_until_up,
)
from .report import Row, ms, times

#: 3x the notes may cost at most this many times the time.
LINEAR_TARGET = 3.5
#: Another person's GET p99 during four imports, at most this many times its p99 alone.
READ_TARGET = 3.0


def run(env: Environment, *, smoke: bool = False) -> list[Row]:
    rows = [_linear_row(alias, smoke) for alias in env.aliases]
    if not env.has_postgres:
        return [*rows, Row("import", "HTTP cases skipped: need PostgreSQL", "-")]
    readers = _prepare_people(Sizes(persons=5, seed_notes=10 if smoke else 150), "import")
    port = _free_port()
    log_path = os.path.join(env.folder, "gunicorn-import.log")
    server = _start_server(env, port, 4, log_path)
    try:
        _wait_until_up(port, server, log_path)
        _warm_up(port, readers)
        rows += _bound_rows(port, readers[0])
        for accepted in (False, True):
            rows.append(_read_row(port, readers[0], readers[1:], smoke, accepted))
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    return rows


def _warm_up(port: int, people: list[Person]) -> None:
    """Every worker answers a few reads and an import first (its first request loads code)."""

    def client(person: Person) -> None:
        for _ in range(5):
            _request(port, person, "GET", BASE)
        answer: dict[str, str] = {"Retry-After": "0"}
        while (
            _post_raw(port, person, f"{BASE}/import", b"x\n" * 300, "text/plain", answer)[0] == 429
        ):
            time.sleep(float(answer["Retry-After"]))  # another client's import holds the slot

    threads = [threading.Thread(target=client, args=(person,)) for person in people * 2]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


# --- linear cost ------------------------------------------------------------------------------


def _linear_row(alias: str, smoke: bool) -> Row:
    from django.test import override_settings

    from agent_memory import LongTermMemory
    from agent_memory.stores.orm import DjangoStore

    from .people import make_person, notes

    small, large = (100, 300) if smoke else (1000, 3000)
    memory = LongTermMemory(store=DjangoStore(using=alias), optimizer=False)
    limits = {"MAX_NOTES": 10 * large, "MAX_TOTAL_CHARS": 1000 * large, "OPTIMIZER": False}
    seconds: dict[int, float] = {}
    with override_settings(AGENT_MEMORY=limits):
        for count in (small, large) * 3:
            person = make_person(alias, f"import-{alias}-{count}-{len(seconds)}-{time.time_ns()}")
            items = notes(count, 120, seed=count)
            start = time.perf_counter()
            result = memory.import_notes(person.pk, items)
            elapsed = time.perf_counter() - start
            assert len(result.created) == count, (len(result.created), count)
            seconds[count] = min(seconds.get(count, elapsed), elapsed)
    ratio = seconds[large] / seconds[small]
    return Row(
        "import",
        f"import {large:,} vs {small:,} notes ({label(alias)}, best of 3)",
        f"{seconds[large]:.2f} s",
        f"{seconds[small]:.2f} s",
        times(ratio),
        f"<= {LINEAR_TARGET}x",
        ok=ratio <= LINEAR_TARGET,
        figures={"small": small, "large": large, "seconds": seconds, "ratio": ratio},
    )


# --- bounds over HTTP -------------------------------------------------------------------------


def _post_raw(
    port: int, person: Person, path: str, body: bytes, content_type: str, answer: dict | None = None
) -> Any:
    """POST ``body``: its status, raw answer and seconds (``answer`` gets the headers)."""
    headers = {
        "Cookie": person.cookie,
        "Host": "127.0.0.1",
        "Accept": "application/json",
        "Content-Type": content_type,
        "X-CSRFToken": person.csrf,
    }
    start = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        connection.request("POST", path, body=body, headers=headers)
        response = connection.getresponse()
        raw = response.read()
        if answer is not None:
            answer.update(response.getheaders())
    except (BrokenPipeError, ConnectionResetError):
        # The server answered and closed before the whole body was sent: refused unread.
        return 400, b"(closed before the body was sent)", time.perf_counter() - start
    finally:
        connection.close()
    return response.status, raw, time.perf_counter() - start


def _lines(megabytes: float, tag: str) -> bytes:
    size = int(megabytes * 1_000_000)
    lines, total, number = [], 0, 0
    while True:
        line = f"{tag} note {number}: likes green tea in the morning and walks after lunch.\n"
        if total + len(line) > size:
            break
        lines.append(line)
        total += len(line)
        number += 1
    return "".join(lines).encode()


def _bound_rows(port: int, person: Person) -> list[Row]:
    rows = []
    cases = [
        ("10 MB text body", _lines(10, "big"), 400),
        ("3,000-line text body", b"".join(_lines(1, "x").splitlines(True)[:3000]), 409),
    ]
    for case, body, expected in cases:
        status, raw, seconds = _post_raw(port, person, f"{BASE}/import", body, "text/plain")
        rows.append(
            Row(
                "import",
                f"{case} ({len(body):,} bytes) → {status}",
                f"{seconds:.3f} s",
                target=f"{expected}, < 1 s",
                ok=status == expected and seconds < 1.0,
                figures={"status": status, "seconds": seconds, "answer": raw[:200].decode()},
            )
        )
    return rows


# --- another person's reads -------------------------------------------------------------------


def _reads(port: int, reader: Person, count: int) -> list[float]:
    found = []
    for _ in range(count):
        status, _data, seconds = _request(port, reader, "GET", BASE)
        assert status == 200, status
        found.append(seconds)
    return found


def _p99(values: list[float]) -> float:
    return statistics.quantiles(values, n=100)[98] if len(values) >= 2 else values[0]


def _importer(
    port: int,
    person: Person,
    stop: threading.Event,
    counts: collections.Counter[str],
    took: list[float],
    accepted: bool,
) -> None:
    """Import as much as an import may be, over and over, as a client that honours the
    ``Retry-After`` of a 429 (every import slot of the site taken) before it tries again."""
    from .people import notes

    cap = _lines(0.999, f"person {person.user_id}")
    full = [{**note, "content": note["content"][:235]} for note in notes(200, 235, seed=9)]
    bodies = [(cap, "text/plain", 409)]
    if accepted:
        bodies.append((json.dumps(full).encode(), "application/json", 200))
    _request(port, person, "DELETE", BASE)  # start from an empty memory: the full one fits
    while not stop.is_set():
        for body, content_type, expected in bodies:
            while not stop.is_set():
                answer: dict[str, str] = {}
                status, raw, seconds = _post_raw(
                    port, person, f"{BASE}/import", body, content_type, answer
                )
                if status != 429:
                    break
                counts["refused"] += 1
                stop.wait(float(answer.get("Retry-After", 1)))
            else:
                return
            assert status == expected, (status, raw[:300])
            took.append(seconds)
            counts["ran"] += 1
            if expected == 200:
                _request(port, person, "DELETE", BASE)


def _read_row(
    port: int, reader: Person, importers: list[Person], smoke: bool, accepted: bool
) -> Row:
    count = 40 if smoke else 300
    _reads(port, reader, 20)  # warm every worker up
    alone = _reads(port, reader, count)
    stop, counts, took = threading.Event(), collections.Counter[str](), []
    threads = [
        threading.Thread(
            target=_importer, args=(port, person, stop, counts, took, accepted), daemon=True
        )
        for person in importers[:4]
    ]
    for thread in threads:
        thread.start()
    time.sleep(1.0)  # all four imports under way
    try:
        loaded = _reads(port, reader, count)
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=120)
    ratio = _p99(loaded) / _p99(alone)
    what = (
        "1 MB bodies (refused) and full 200-note imports"
        if accepted
        else "1 MB bodies (the cap, refused as too many notes)"
    )
    return Row(
        "import",
        f"another person's GET p50 / p99 while four clients send {what} (gunicorn, 4 workers, "
        f"PostgreSQL; {counts['ran']} imports ran, each {ms(statistics.median(took or [0.0]))} "
        f"p50; {counts['refused']} answered 429, all slots taken)",
        f"{ms(statistics.median(loaded))} / {ms(_p99(loaded))}",
        f"{ms(statistics.median(alone))} / {ms(_p99(alone))} alone",
        times(ratio),
        f"p99 <= {READ_TARGET}x",
        ok=ratio <= READ_TARGET,
        figures={
            "alone_p50": statistics.median(alone),
            "alone_p99": _p99(alone),
            "loaded_p50": statistics.median(loaded),
            "loaded_p99": _p99(loaded),
            "imports": counts["ran"],
            "refused_429": counts["refused"],
            "import_p50": statistics.median(took) if took else None,
            "import_max": max(took, default=None),
        },
    )
