"""The site runs at most ``MAX_CONCURRENT_IMPORTS`` imports at once: one more is refused at once
(kind ``busy``, HTTP 429 with ``Retry-After``), before its body is read, and nothing is written.

The slots other workers hold are held here by other threads, each with its own database
connection (a PostgreSQL session of its own; its own lock file on SQLite), as other processes
would hold them; ``tests/stores/test_races.py`` races real processes for them.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.db import connections

from agent_memory import LongTermMemory, get_memory
from agent_memory.api.parsers import PlainTextParser
from agent_memory.errors import ErrorCode, InvalidNote, TooManyImports
from agent_memory.models import MemoryNote
from agent_memory.stores.in_memory import InMemoryStore
from tests.api.test_endpoints import BASE, assert_error
from tests.screen.test_people import field_errors, upload

pytestmark = pytest.mark.django_db

LINES = "Likes green tea.\nWalks the dog at 7.\n"


@contextmanager
def slots_held(count: int, memory: LongTermMemory | None = None) -> Iterator[list[bool]]:
    """``count`` threads each try to take an import slot of ``memory`` (the site's by default)
    and hold it until the block ends; yields whether each one got one."""
    release, took, threads = threading.Event(), [], []

    def hold(ready: threading.Event) -> None:
        try:
            with (memory or get_memory()).import_slot():
                took.append(True)
                ready.set()
                release.wait(60)
        except TooManyImports:
            took.append(False)
        finally:
            ready.set()
            connections.close_all()

    try:
        for _ in range(count):
            ready = threading.Event()
            thread = threading.Thread(target=hold, args=(ready,))
            thread.start()
            threads.append(thread)
            ready.wait(60)
        yield took
    finally:
        release.set()
        for thread in threads:
            thread.join(60)


def post_text(api: Any, body: str) -> Any:
    return api.post(f"{BASE}/import", body.encode(), content_type="text/plain")


def test_one_import_runs_at_once_by_default_and_the_next_is_429_busy_saying_when_to_retry(
    api, user
):
    with slots_held(1) as took:
        assert took == [True]
        response = post_text(api, LINES)

    message = assert_error(response, 429, "busy")
    assert response["Retry-After"] == "2"
    assert "nothing was imported" in message and "Try again in 2 seconds" in message
    assert not MemoryNote.objects.filter(user=user).exists()
    # The other import is done: this one runs as before.
    response = post_text(api, LINES)
    assert response.status_code == 200 and response.json()["created"] == 2


def test_a_refused_import_is_answered_before_its_body_is_read(api, user, monkeypatch):
    read = []
    parse = PlainTextParser.parse
    monkeypatch.setattr(
        PlainTextParser, "parse", lambda self, *args: read.append(1) or parse(self, *args)
    )

    with slots_held(1):
        assert_error(post_text(api, LINES * 5000), 429, "busy")

    assert read == []
    assert post_text(api, LINES * 5000).json()["created"] == 2
    assert read == [1]


def test_the_bound_is_the_setting_shared_by_every_worker(api, user, settings):
    settings.AGENT_MEMORY = {**settings.AGENT_MEMORY, "MAX_CONCURRENT_IMPORTS": 2}

    with slots_held(1):
        assert post_text(api, LINES).status_code == 200
    with slots_held(3) as took:
        assert took == [True, True, False]
        assert_error(post_text(api, "Reads sci-fi.\n"), 429, "busy")
    assert post_text(api, "Reads sci-fi.\n").json()["created"] == 1


def test_the_screens_import_while_every_slot_is_taken_says_to_try_again_with_429(client, user):
    client.force_login(user)

    with slots_held(1):
        response = client.post("/memory/import", {"file": upload(LINES, "notes.txt")})

    assert response.status_code == 429
    assert response["Retry-After"] == "2"
    (error,) = field_errors(response.content.decode())
    assert "Many imports are running on this site right now" in error
    assert "Try again in a few seconds" in error
    assert not MemoryNote.objects.filter(user=user).exists()
    response = client.post("/memory/import", {"file": upload(LINES, "notes.txt")})
    assert response.status_code == 200
    assert MemoryNote.objects.filter(user=user).count() == 2


def test_import_notes_raises_too_many_imports_on_every_store(memory_on_each_store, people):
    memory, (person, _) = memory_on_each_store, people

    with slots_held(1, memory), pytest.raises(TooManyImports) as busy:
        memory.import_notes(person, LINES)

    assert busy.value.kind == "busy" and busy.value.code is ErrorCode.TOO_MANY_IMPORTS
    assert busy.value.retry_after == 2 and busy.value.params["slots"] == 1
    assert memory.notes(person) == []
    assert len(memory.import_notes(person, LINES).created) == 2


def test_an_import_inside_a_held_slot_takes_no_second_one(memory, person):
    with memory.import_slot():
        assert len(memory.import_notes(person, LINES).created) == 2
        with slots_held(1, memory) as took:
            assert took == [False]
    with slots_held(1, memory) as took:
        assert took == [True]


def test_a_refused_or_failed_import_gives_its_slot_back(memory, person, settings):
    settings.AGENT_MEMORY = {**settings.AGENT_MEMORY, "MAX_NOTES": 1}
    with pytest.raises(InvalidNote):
        memory.import_notes(person, "password: hunter22")
    with slots_held(1, memory) as took:
        assert took == [True]
    with pytest.raises(Exception, match="room for 2 new notes"):
        memory.import_notes(person, LINES)
    with slots_held(1, memory) as took:
        assert took == [True]


def test_stores_without_a_shared_database_count_their_imports_in_the_process():
    first, second = InMemoryStore(), InMemoryStore()

    with first.import_slot(1) as free, first.import_slot(1) as again:
        assert (free, again) == (True, False)
        with second.import_slot(1) as elsewhere:
            assert elsewhere is True
    with first.import_slot(1) as free:
        assert free is True
