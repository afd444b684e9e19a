"""Changing the store for the whole site is one setting: the API and the screen then keep notes
in the store ``AGENT_MEMORY["STORE"]`` names (here the in-process store), not in the database."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from agent_memory import get_memory
from agent_memory.models import MemoryNote
from agent_memory.stores.in_memory import InMemoryStore

BASE = "/api/chat/memory"

pytestmark = pytest.mark.django_db


@pytest.fixture
def in_memory(settings) -> InMemoryStore:
    settings.AGENT_MEMORY = {"STORE": {"BACKEND": "agent_memory.stores.in_memory.InMemoryStore"}}
    store = get_memory().store
    assert isinstance(store, InMemoryStore)
    return store


def test_the_api_and_the_screen_share_the_in_memory_store(client, user, in_memory):
    api = APIClient()
    api.force_login(user)
    client.force_login(user)

    created = api.post(BASE, {"categories": ["Food"], "content": "Prefers tea"}, format="json")
    assert created.status_code == 201
    saved = client.post("/memory/", {"categories": "Work", "content": "Writes Python"})
    assert saved.status_code == 302

    listed = api.get(BASE).json()
    assert [note["content"] for note in listed["notes"]] == ["Writes Python", "Prefers tea"]
    assert listed["counts"] == {"total": 2, "limit": 200, "shown": 2}
    page = client.get("/memory/").content.decode()
    assert "Prefers tea" in page and "Writes Python" in page
    assert [note.content for note in in_memory.list_notes(user.pk)] == [
        "Writes Python",
        "Prefers tea",
    ]
    assert not MemoryNote.objects.exists()


def test_edit_and_delete_on_the_screen_reach_the_in_memory_store(client, user, in_memory):
    client.force_login(user)
    (note,) = get_memory().create_notes(user, [{"categories": ["Food"], "content": "Likes tea"}])

    edited = client.post(
        f"/memory/notes/{note.id}/edit",
        {"categories": "Food", "content": "Likes green tea", "version": note.version},
    )
    assert edited.status_code == 302
    (changed,) = in_memory.list_notes(user.pk)
    assert changed.content == "Likes green tea"

    deleted = client.post(f"/memory/notes/{note.id}/delete", {"version": changed.version})
    assert deleted.status_code == 302
    assert in_memory.list_notes(user.pk) == []
    assert not MemoryNote.objects.exists()
