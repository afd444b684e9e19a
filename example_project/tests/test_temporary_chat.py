"""The example chat's temporary chats and the memory switch: the demo agent (the same tool loop
a real model goes through) neither reads nor writes memory in them."""

from __future__ import annotations

import pytest

from agent_memory import LongTermMemory
from example_project.chat import agent
from example_project.chat.models import Chat, Message

pytestmark = pytest.mark.usefixtures("demo_agent")


def new_chat(client, **data) -> Chat:
    response = client.post("/chats/new", data)
    assert response.status_code == 302
    return Chat.objects.get(pk=int(response["Location"].rstrip("/").split("/")[-1]))


def test_the_temporary_chat_button_starts_a_chat_that_says_it_is_temporary(client, user):
    client.force_login(user)
    page = client.get("/").content.decode()
    assert 'id="new-temporary-chat"' in page
    chat = new_chat(client, temporary="1")
    assert chat.is_temporary
    page = client.get(f"/chats/{chat.pk}/").content.decode()
    assert 'id="temporary-banner"' in page and "nothing you say in this chat is remembered" in page
    assert not new_chat(client).is_temporary


def test_a_temporary_chat_neither_reads_nor_writes_memory(client, user, monkeypatch):
    memory = LongTermMemory()
    memory.create_notes(user, [{"categories": ["Food"], "content": "Prefers tea"}])
    called = []
    monkeypatch.setattr(LongTermMemory, "after_turn", lambda self, *a, **k: called.append(a))
    client.force_login(user)
    chat = new_chat(client, temporary="1")
    client.post(f"/chats/{chat.pk}/send", {"text": "remember that I live in Lisbon"})
    client.post(f"/chats/{chat.pk}/send", {"text": "what do you know about me?"})
    assert [note.content for note in memory.notes(user)] == ["Prefers tea"]
    questions = chat.messages.filter(role=Message.Role.USER)
    assert all(message.memory_text == "" for message in questions)
    assert not chat.messages.filter(role=Message.Role.TOOL).exists()
    answers = " ".join(
        chat.messages.filter(role=Message.Role.ASSISTANT).values_list("content", flat=True)
    )
    assert "Prefers tea" not in answers
    assert called == []
    chat.refresh_from_db()
    assert chat.is_temporary  # still temporary after its turns
    # The next ordinary chat knows nothing of Lisbon.
    ordinary = new_chat(client)
    answer = agent.run_turn(ordinary, "what do you know about me?")
    assert "Lisbon" not in answer.content and "tea" in answer.content.lower()


def test_a_temporary_chat_stays_temporary_after_compaction(client, user):
    client.force_login(user)
    chat = new_chat(client, temporary="1")
    for text in ["hello", "hi again", "and again"]:
        agent.run_turn(chat, text)
    agent.compact_history(chat, keep_turns=1)
    chat.refresh_from_db()
    assert chat.is_temporary
    agent.run_turn(chat, "remember that I like jazz")
    assert LongTermMemory().notes(user) == []


def test_with_memory_off_the_chat_gets_no_block_and_no_memory_tool(client, user):
    memory = LongTermMemory()
    memory.create_notes(user, [{"categories": ["Food"], "content": "Prefers tea"}])
    memory.set_enabled(user, False)
    client.force_login(user)
    chat = new_chat(client)
    answer = agent.run_turn(chat, "remember that I live in Lisbon")
    question = chat.messages.get(role=Message.Role.USER)
    assert question.memory_text == ""
    assert not chat.messages.filter(role=Message.Role.TOOL).exists()
    assert [note.content for note in memory.notes(user)] == ["Prefers tea"]
    assert not answer.failed
    memory.set_enabled(user, True)
    agent.run_turn(chat, "hello")
    latest = chat.messages.filter(role=Message.Role.USER).order_by("id").last()
    assert "Prefers tea" in latest.memory_text  # on again: the next turn gets the full block
