"""The example chat against an OpenAI-compatible server: a tiny local fake speaking chat
completions with tool calls."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.test import override_settings

from agent_memory import LongTermMemory
from agent_memory.models import MergeRun, MergeRunStatus
from example_project.chat.models import Chat, Message
from tests.fake_models import FakeModelServer, Handler, completion


def scripted(body: dict[str, Any]) -> tuple[int, Any]:
    """A model that saves a note, then answers (echoing a fake memory block)."""
    if "tools" not in body:  # the optimizer asking for merges, with the same model
        return 200, completion('{"groups": []}')
    last = body["messages"][-1]
    if last["role"] == "user":
        arguments = {
            "action": "create",
            "notes": [{"categories": ["Preferences"], "content": "Prefers tea"}],
        }
        call = {
            "id": "call_1",
            "type": "function",
            "function": {"name": "manage_memory", "arguments": json.dumps(arguments)},
        }
        return 200, completion(None, [call])
    result = json.loads(last["content"])
    note = result["notes"][0]
    return 200, completion(
        f'Noted as {note["id"]}.\n<agent_memory>\n<note key="memory:99">fake</note>\n'
        "</agent_memory>\nAnything else?"
    )


@pytest.fixture
def fake_model() -> Iterator[Callable[[Handler], FakeModelServer]]:
    servers: list[FakeModelServer] = []

    def start(respond: Handler) -> FakeModelServer:
        server = FakeModelServer(respond)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()


def model_settings(url: str, timeout: float = 10) -> dict[str, Any]:
    return {
        "MODELS": {
            "default": {
                "BACKEND": "example_project.chat.llm.OpenAICompatibleModel",
                "OPTIONS": {
                    "base_url": url,
                    "api_key": "test-key",
                    "model": "fake-model",
                    "timeout": timeout,
                },
            }
        }
    }


def test_a_full_turn_with_a_tool_call_against_an_openai_compatible_server(client, user, fake_model):
    server = fake_model(scripted)
    LongTermMemory().create_notes(user, [{"categories": ["Work"], "content": "I write Django"}])
    client.force_login(user)
    chat = Chat.objects.create(user=user)

    with override_settings(AGENT_MEMORY=model_settings(server.url)):
        response = client.post(f"/chats/{chat.pk}/send", {"text": "I like tea"}, follow=True)

    assert response.status_code == 200
    # The note was saved through manage_memory.
    notes = LongTermMemory().notes(user)
    assert [note.content for note in notes] == ["Prefers tea", "I write Django"]
    saved = notes[0]
    # First request: system prompt with the memory instructions, tools, the block in the question.
    first = server.requests[0]
    assert first["model"] == "fake-model"
    assert server.headers[0]["Authorization"] == "Bearer test-key"
    assert first["messages"][0]["role"] == "system"
    assert LongTermMemory().instructions in first["messages"][0]["content"]
    names = [tool["function"]["name"] for tool in first["tools"]]
    assert "manage_memory" in names and "today" in names
    question = first["messages"][-1]
    assert question["role"] == "user"
    assert question["content"].startswith("<agent_memory>\n")
    assert question["content"].endswith("\n\nI like tea")
    assert "I write Django" in question["content"]
    # Second request: the tool call and its result went back to the model.
    second = server.requests[1]
    assert second["messages"][-2]["tool_calls"][0]["id"] == "call_1"
    tool_result = second["messages"][-1]
    assert tool_result["role"] == "tool" and tool_result["tool_call_id"] == "call_1"
    assert json.loads(tool_result["content"])["notes"][0]["id"] == saved.id
    # The answer: the fake block is stripped before it is stored and shown.
    answer = chat.messages.filter(role=Message.Role.ASSISTANT, tool_calls__isnull=True).get()
    assert answer.content == f"Noted as {saved.id}.\nAnything else?"
    assert answer.state == {"seen": {str(notes[1].id): 1}}
    page = response.content.decode()
    assert f"Noted as {saved.id}." in page
    assert "memory:99" not in page and "fake</note>" not in page
    assert "Saved a note" in page and 'href="/memory/"' in page
    # after_turn ran the optimizer with the same model alias; two unrelated notes are no
    # likely duplicates, so it succeeded without calling the model again.
    (run,) = MergeRun.objects.filter(user=user)
    assert (run.model, run.status) == ("default", MergeRunStatus.SUCCEEDED)
    assert len(server.requests) == 2


def test_the_next_turn_sends_the_same_start_of_the_prompt(client, user, fake_model):
    server = fake_model(scripted)
    client.force_login(user)
    chat = Chat.objects.create(user=user)
    with override_settings(AGENT_MEMORY=model_settings(server.url)):
        client.post(f"/chats/{chat.pk}/send", {"text": "I like tea"})
        requests_before = len(server.requests)
        client.post(f"/chats/{chat.pk}/send", {"text": "And coffee"})

    first_turn = server.requests[1]["messages"]
    next_turn = server.requests[requests_before]["messages"]
    # Byte-identical start (the block stays in the first question), so prompt caching works.
    assert json.dumps(next_turn[: len(first_turn)]) == json.dumps(first_turn)
    assert next_turn[-1] == {"role": "user", "content": "And coffee"}


@pytest.mark.parametrize(
    ("respond", "shown"),
    [
        (lambda body: (500, {"error": {"message": "upstream exploded"}}), "upstream exploded"),
        (lambda body: (401, {"error": {"message": "Incorrect API key"}}), "Incorrect API key"),
        (lambda body: (200, {"unexpected": True}), "unexpected shape"),
    ],
)
def test_model_errors_are_shown_to_the_person_never_a_500(client, user, fake_model, respond, shown):
    server = fake_model(respond)
    client.force_login(user)
    chat = Chat.objects.create(user=user)
    with override_settings(AGENT_MEMORY=model_settings(server.url)):
        response = client.post(f"/chats/{chat.pk}/send", {"text": "hello"}, follow=True)
    assert response.status_code == 200
    assert shown in response.content.decode()
    error = chat.messages.get(failed=True, role=Message.Role.ASSISTANT)
    assert shown in error.content
    # A failed turn is never sent to the model again.
    assert chat.messages.filter(failed=False).count() == 0


def test_an_unreachable_model_is_an_error_message(client, user, fake_model):
    server = fake_model(scripted)
    url = server.url
    server.close()
    client.force_login(user)
    chat = Chat.objects.create(user=user)
    with override_settings(AGENT_MEMORY=model_settings(url)):
        response = client.post(f"/chats/{chat.pk}/send", {"text": "hello"}, follow=True)
    assert response.status_code == 200
    assert "Could not reach the model service" in response.content.decode()


def test_a_slow_model_times_out_with_a_message(client, user, fake_model):
    release = threading.Event()

    def slow(body: dict[str, Any]) -> tuple[int, Any]:
        release.wait(10)
        return 200, completion("late")

    server = fake_model(slow)
    client.force_login(user)
    chat = Chat.objects.create(user=user)
    try:
        with override_settings(AGENT_MEMORY=model_settings(server.url, timeout=0.5)):
            response = client.post(f"/chats/{chat.pk}/send", {"text": "hello"}, follow=True)
    finally:
        release.set()
    assert response.status_code == 200
    assert "did not answer within" in response.content.decode()


def tool_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def test_app_tools_and_unknown_tools_go_through_the_same_loop(client, user, fake_model):
    def respond(body: dict[str, Any]) -> tuple[int, Any]:
        if "tools" not in body:
            return 200, completion('{"groups": []}')
        if body["messages"][-1]["role"] == "user":
            calls = [
                tool_call("c1", "today", "{}"),
                tool_call("c2", "no_such_tool", "{}"),
                tool_call("c3", "manage_memory", "not json"),
            ]
            return 200, completion("Let me check.", calls)
        return 200, completion("Done.")

    server = fake_model(respond)
    client.force_login(user)
    chat = Chat.objects.create(user=user)
    with override_settings(AGENT_MEMORY=model_settings(server.url)):
        client.post(f"/chats/{chat.pk}/send", {"text": "what day is it?"})

    results = {
        message["tool_call_id"]: json.loads(message["content"])
        for message in server.requests[1]["messages"]
        if message["role"] == "tool"
    }
    assert set(results["c1"]) == {"date"}
    assert results["c2"]["error"]["kind"] == "invalid"
    assert results["c3"]["error"]["kind"] == "invalid"
    assert chat.messages.filter(role=Message.Role.ASSISTANT).last().content == "Done."


def test_a_model_that_never_stops_calling_tools_is_an_error(client, user, fake_model):
    def respond(body: dict[str, Any]) -> tuple[int, Any]:
        arguments = json.dumps({"action": "search", "query": "tea"})
        return 200, completion(None, [tool_call("c", "manage_memory", arguments)])

    server = fake_model(respond)
    client.force_login(user)
    chat = Chat.objects.create(user=user)
    with override_settings(AGENT_MEMORY=model_settings(server.url)):
        response = client.post(f"/chats/{chat.pk}/send", {"text": "hello"}, follow=True)
    assert response.status_code == 200
    assert "kept calling tools" in response.content.decode()
    assert len(server.requests) == 8  # MAX_TOOL_ROUNDS, then the turn gives up
