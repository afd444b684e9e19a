"""Provenance: ``source`` in every note answered, ``origin`` chosen by the host, the screen's
link back to the chat, and chats that clear their origins when deleted."""

from __future__ import annotations

import pytest
from django.test import Client, override_settings

from agent_memory import LongTermMemory
from agent_memory.errors import InvalidNote
from agent_memory.models import MemoryNote
from agent_memory.stores.orm import DjangoStore
from example_project.chat.models import Chat
from example_project.chat.origins import chat_url, origin_of

LINKED = {"ORIGIN_URL": "example_project.chat.origins.chat_url"}


def test_a_tool_call_stores_the_origin_the_host_gives(memory, person):
    created = memory.call_tool(
        person,
        {"action": "create", "notes": [{"categories": ["Pets"], "content": "Has a cat."}]},
        origin="chat:7",
    )
    (note,) = created["notes"]
    assert note["source"] == "agent"
    assert memory.notes(person)[0].origin == "chat:7"

    updated = memory.call_tool(
        person,
        {
            "action": "update",
            "id": note["id"],
            "version": 1,
            "categories": ["Pets"],
            "content": "Has two cats.",
        },
        origin="chat:9",
    )
    assert updated["note"]["source"] == "agent"
    assert memory.notes(person)[0].origin == "chat:9"


def test_an_edit_without_origin_clears_it(memory, person):
    (note,) = memory.create_notes(
        person, [{"categories": ["A"], "content": "Fact."}], origin="chat:1"
    )
    memory.update_note(person, note.id, 1, ["A"], "Fact, edited.", source="person")
    assert memory.notes(person)[0].origin == ""


@pytest.mark.parametrize("origin", [5, "x" * 201, ["chat:1"]])
def test_an_origin_that_is_not_short_text_is_invalid(memory, person, origin):
    with pytest.raises(InvalidNote, match="origin"):
        memory.create_notes(person, [{"categories": ["A"], "content": "Fact."}], origin=origin)


def test_clear_origin_keeps_the_notes(memory, person):
    memory.create_notes(person, [{"categories": ["A"], "content": "One."}], origin="chat:3")
    memory.create_notes(person, [{"categories": ["A"], "content": "Two."}], origin="chat:4")

    assert memory.clear_origin(person, "chat:3") == 1

    assert sorted((note.content, note.origin) for note in memory.notes(person)) == [
        ("One.", ""),
        ("Two.", "chat:4"),
    ]


@pytest.mark.django_db
def test_the_screen_links_a_note_to_the_chat_it_was_saved_in(user):
    chat = Chat.objects.create(user=user)
    memory = LongTermMemory(store=DjangoStore())
    memory.call_tool(
        user,
        {"action": "create", "notes": [{"categories": ["A"], "content": "Likes jazz."}]},
        origin=origin_of(chat),
    )
    memory.create_notes(user, [{"categories": ["B"], "content": "Typed by hand."}], source="person")
    client = Client()
    client.force_login(user)

    with override_settings(AGENT_MEMORY=LINKED):
        page = client.get("/memory/").content.decode()
    assert page.count("saved by the agent in this chat") == 1
    assert f'href="{chat_url(origin_of(chat))}"' in page

    with override_settings(AGENT_MEMORY={}):
        unlinked = client.get("/memory/").content.decode()
    assert "saved by the agent in this chat" not in unlinked


@pytest.mark.django_db
def test_deleting_a_chat_clears_origins_pointing_at_it_and_keeps_the_notes(user):
    chat, other = Chat.objects.create(user=user), Chat.objects.create(user=user)
    memory = LongTermMemory(store=DjangoStore())
    memory.create_notes(user, [{"categories": ["A"], "content": "One."}], origin=origin_of(chat))
    memory.create_notes(user, [{"categories": ["A"], "content": "Two."}], origin=origin_of(other))
    client = Client()
    client.force_login(user)

    response = client.post(f"/chats/{chat.pk}/delete")

    assert response.status_code == 302
    assert sorted(MemoryNote.objects.filter(user=user).values_list("content", "origin")) == [
        ("One.", ""),
        ("Two.", origin_of(other)),
    ]


def test_chat_url_links_only_chat_origins():
    assert chat_url("chat:12") == "/chats/12/"
    assert chat_url("ticket:12") is None
    assert chat_url("chat:12x") is None
