"""The example listens to ``note_deleted``: a deleted note's text leaves its stored chats too."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from agent_memory import LongTermMemory
from example_project.chat import agent
from example_project.chat.models import Chat, Message
from tests.test_deletion_everywhere import copies_of

pytestmark = pytest.mark.usefixtures("demo_agent")


def chats_with_a_note(user, word: str):
    """A chat whose agent saved a note with ``word`` (tool call and result), and a second chat
    whose first question carried it in the memory block."""
    saving = Chat.objects.create(user=user)
    agent.run_turn(saving, f"remember that I prefer {word} tea")
    reading = Chat.objects.create(user=user)
    agent.run_turn(reading, "hello")
    (note,) = LongTermMemory().notes(user)
    assert word in note.content.lower()
    first = reading.messages.filter(role=Message.Role.USER).first()
    assert word in first.memory_text.lower()
    # The note, the tool call and its result, the block (the person's own question stays theirs).
    assert len(copies_of(note.content)) >= 4
    return note


@pytest.mark.parametrize("how", ["api", "tool", "erase"])
def test_deleting_a_note_leaves_its_text_in_no_table_of_the_example(
    user, how, django_capture_on_commit_callbacks
):
    note = chats_with_a_note(user, "quarvello")
    memory = LongTermMemory()
    with django_capture_on_commit_callbacks(execute=True):
        if how == "api":
            client = APIClient()
            client.force_login(user)
            response = client.delete(f"/api/chat/memory/{note.id}?version={note.version}")
            assert response.status_code == 204
        elif how == "tool":
            answer = memory.call_tool(user, {"action": "delete", "id": note.key, "version": 1})
            assert answer == {"deleted": note.id}
        else:
            memory.clear(user)

    assert copies_of(note.content) == []
    marker = f"[deleted note memory:{note.id}]"
    assert Message.objects.filter(chat__user=user, memory_text__contains=marker).exists()
    assert Message.objects.filter(chat__user=user, content__contains=marker).exists()


def test_another_persons_chats_keep_their_texts(
    user, other_user, django_capture_on_commit_callbacks
):
    note = chats_with_a_note(user, "quarvello")
    chats_with_a_note(other_user, "quarvello")
    with django_capture_on_commit_callbacks(execute=True):
        LongTermMemory().delete_note(user, note.id, 1)
    assert copies_of(note.content)  # the other person's note and chats
    mine = Message.objects.filter(chat__user=user)
    assert not mine.filter(content__contains=note.content).exists()
    assert not mine.filter(memory_text__contains=note.content).exists()
