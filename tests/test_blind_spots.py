"""Behaviours no other test would notice breaking: each test here was checked by putting its bug
back by hand and seeing it fail."""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime, timedelta

import pytest
from rest_framework.authentication import RemoteUserAuthentication, SessionAuthentication
from rest_framework.test import APIClient

from agent_memory.api.views import MemoryAPIView
from agent_memory.models import MemoryNote
from agent_memory.notes import NewNote, Note
from agent_memory.search import search_notes
from agent_memory.secrets import find_secret
from agent_memory.stores.in_memory import InMemoryStore

BASE = "/api/chat/memory"


# --- a store method that ignores the person ---------------------------------------------------


def test_clear_origin_forgets_the_origin_on_that_person_s_notes_only(memory, people):
    person, other = people
    memory.create_notes(person, [{"categories": ["A"], "content": "Likes tea"}], origin="chat:7")
    memory.create_notes(other, [{"categories": ["A"], "content": "Likes tea"}], origin="chat:7")

    assert memory.clear_origin(person, "chat:7") == 1

    assert [note.origin for note in memory.notes(person)] == [""]
    assert [note.origin for note in memory.notes(other)] == ["chat:7"]
    assert memory.clear_origin(person, "chat:7") == 0


# --- the checked write of BaseStore takes the lock before it checks -----------------------------


class WatchedLockStore(InMemoryStore):
    """The in-memory store (BaseStore's checked writes), noting when the person's lock is held."""

    def __init__(self) -> None:
        super().__init__()
        self.held = 0

    def _write_lock(self, user_id):
        lock = super()._write_lock(user_id)

        @contextlib.contextmanager
        def watched():
            with lock:
                self.held += 1
                try:
                    yield
                finally:
                    self.held -= 1

        return watched()


def test_store_base_checked_writes_run_the_check_under_the_person_s_lock():
    store = WatchedLockStore()
    seen = []

    def check(*args):
        seen.append(store.held)

    (note,) = store.insert_notes_checked(1, [NewNote(("A",), "Likes tea")], check)
    store.update_note_checked(1, note.id, note.version, NewNote(("A",), "Likes green tea"), check)

    assert seen == [1, 1]


# --- CSRF for requests the web server authenticated (REMOTE_USER) -----------------------------


@pytest.fixture
def host_remote_user(monkeypatch, settings):
    """A host whose web server authenticates people and passes REMOTE_USER on."""
    settings.AUTHENTICATION_BACKENDS = ["django.contrib.auth.backends.RemoteUserBackend"]
    monkeypatch.setattr(
        MemoryAPIView, "authentication_classes", [SessionAuthentication, RemoteUserAuthentication]
    )


@pytest.mark.django_db
def test_remote_user_requests_must_carry_the_csrf_token(user, host_remote_user):
    client = APIClient(enforce_csrf_checks=True)
    body = {"categories": ["A"], "content": "Likes tea."}

    refused = client.post(BASE, body, format="json", REMOTE_USER=user.username)

    assert refused.status_code == 403, refused.content
    assert "CSRF" in refused.json()["error"]["message"]
    assert not MemoryNote.objects.exists()
    assert client.get(BASE, REMOTE_USER=user.username).status_code == 200
    token = "b" * 32
    client.cookies["csrftoken"] = token
    allowed = client.post(
        BASE, body, format="json", REMOTE_USER=user.username, headers={"X-CSRFToken": token}
    )
    assert allowed.status_code == 201, allowed.content


# --- card numbers are Luhn-checked ------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Order number 4111 1111 1111 1112 arrives Friday",
        "Tracking 1234-5678-9012-3456",
        "Loyalty card 5500 0000 0000 0005",
    ],
)
def test_a_16_digit_number_that_fails_the_luhn_check_is_no_card(text):
    assert find_secret(text) is None


@pytest.mark.parametrize(
    "text", ["Card 4111 1111 1111 1111", "Pays with 5500-0000-0000-0004", "4012888888881881"]
)
def test_a_luhn_valid_card_number_is_refused(text):
    assert find_secret(text)


# --- a partial word match never outranks the note found by meaning ----------------------------


def test_a_note_sharing_only_some_words_of_the_query_ranks_below_the_note_meant():
    start = datetime(2025, 1, 1, tzinfo=UTC)

    def note(note_id: int, content: str, minutes: int) -> Note:
        changed = start - timedelta(minutes=minutes)
        return Note(note_id, 1, ("General",), content, 1, "agent", changed, changed)

    # The partial match is the more recently changed: only the ranking can put it second.
    partial = note(1, "Takes sick days on Fridays", 0)
    meant = note(2, "Allergic to peanuts and shellfish", 5)

    result = search_notes(
        [partial, meant], "what food makes her sick", 10, similarities=[0.05, 0.8]
    )

    # Word matches need every meaningful word of the query, so the partial one may not be
    # listed at all; if it is, it comes after the note meant.
    assert result.notes[0] == meant
    assert result.notes in ([meant], [meant, partial])
