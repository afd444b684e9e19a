"""The example chat against Anthropic's Messages API: a local fake server speaking its shapes
(``tool_use`` and ``tool_result`` blocks), and the settings the example builds from
``ANTHROPIC_*`` and ``OPENAI_*`` variables."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.test import override_settings

from agent_memory import LongTermMemory
from agent_memory.models import MergeRun, MergeRunStatus
from example_project.chat import agent
from example_project.chat.llm import AnthropicModel, ModelError, parse_anthropic_reply
from example_project.chat.models import Chat, Message
from tests.fake_models import ANTHROPIC_PATH, FakeModelServer, anthropic_message

ROOT = Path(__file__).resolve().parents[2]


def scripted(body: dict[str, Any]) -> tuple[int, Any]:
    """Saves a note with manage_memory, then answers with the tool's result; as the optimizer's
    model (no tools), proposes no merge."""
    if "tools" not in body:
        return 200, anthropic_message({"type": "text", "text": '{"groups": []}'})
    last = body["messages"][-1]
    results = [block for block in last["content"] if block["type"] == "tool_result"]
    if not results:
        note = {"categories": ["Preferences"], "content": "Prefers tea"}
        return 200, anthropic_message(
            {"type": "text", "text": "Saving that."},
            {
                "type": "tool_use",
                "id": "toolu_1",
                "name": "manage_memory",
                "input": {"action": "create", "notes": [note]},
            },
        )
    saved = json.loads(results[0]["content"])["notes"][0]["id"]
    return 200, anthropic_message({"type": "text", "text": f"Noted as {saved}."})


def anthropic_settings(server: FakeModelServer) -> dict[str, Any]:
    options = {"base_url": server.root, "api_key": "test-key", "model": "claude-sonnet-4-6"}
    return {
        "MODELS": {
            "default": {
                "BACKEND": AnthropicModel.__module__ + ".AnthropicModel",
                "OPTIONS": {**options, "timeout": 10},
            }
        }
    }


@pytest.fixture
def server():
    running = FakeModelServer(scripted, path=ANTHROPIC_PATH)
    yield running
    running.close()


def test_a_full_turn_with_a_tool_call_against_the_anthropic_messages_api(user, server):
    LongTermMemory().create_notes(user, [{"categories": ["Work"], "content": "I write Django"}])
    chat = Chat.objects.create(user=user)
    with override_settings(AGENT_MEMORY=anthropic_settings(server)):
        answer = agent.run_turn(chat, "I like tea")

    assert not answer.failed, answer.content
    assert answer.content.startswith("Noted as ")
    assert [note.content for note in LongTermMemory().notes(user)] == [
        "Prefers tea",
        "I write Django",
    ]
    first, second = server.requests[:2]
    headers = {name.lower(): value for name, value in server.headers[0].items()}
    assert headers["x-api-key"] == "test-key" and headers["anthropic-version"] == "2023-06-01"
    assert first["model"] == "claude-sonnet-4-6" and first["max_tokens"] > 0
    # System text apart; the memory block rides on the question; tools in Anthropic's shape.
    assert "manage_memory" in first["system"]
    assert [m["role"] for m in first["messages"]] == ["user"]
    assert "I write Django" in first["messages"][0]["content"][0]["text"]
    tool = next(t for t in first["tools"] if t["name"] == "manage_memory")
    assert tool["input_schema"]["type"] == "object"
    # The tool call goes back as tool_use, its result as a tool_result in the next user turn.
    assert [m["role"] for m in second["messages"]] == ["user", "assistant", "user"]
    assert second["messages"][1]["content"][-1]["type"] == "tool_use"
    result = second["messages"][2]["content"][0]
    assert result["type"] == "tool_result" and result["tool_use_id"] == "toolu_1"
    stored = chat.messages.filter(role=Message.Role.TOOL).get()
    assert stored.tool_call_id == "toolu_1"
    # after_turn ran the optimizer with the same model alias; two unrelated notes are no
    # likely duplicates, so it succeeded without calling the model again.
    (run,) = MergeRun.objects.filter(user=user)
    assert (run.model, run.status) == ("default", MergeRunStatus.SUCCEEDED)
    assert len(server.requests) == 2


def test_an_anthropic_error_is_shown_to_the_person_with_its_message(user):
    def refuse(body):
        return 401, {
            "type": "error",
            "error": {"type": "authentication_error", "message": "invalid x-api-key"},
        }

    failing = FakeModelServer(refuse, path=ANTHROPIC_PATH)
    try:
        with override_settings(AGENT_MEMORY=anthropic_settings(failing)):
            answer = agent.run_turn(Chat.objects.create(user=user), "hello")
    finally:
        failing.close()
    assert answer.failed
    assert "HTTP 401" in answer.content and "invalid x-api-key" in answer.content


def test_an_answer_without_content_blocks_is_a_clear_error():
    with pytest.raises(ModelError, match="no content blocks"):
        parse_anthropic_reply({"type": "message"})


def test_the_optimizer_asks_anthropic_through_complete(server):
    model = AnthropicModel(api_key="k", model="claude-sonnet-4-6", base_url=server.root)
    messages = [{"role": "system", "content": "Merge."}, {"role": "user", "content": "notes"}]
    assert model.complete(messages) == '{"groups": []}'
    assert server.requests[-1]["system"] == "Merge."
    assert server.requests[-1]["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "notes"}]}
    ]


def example_model_config(**environment: str) -> dict[str, Any]:
    """``CHAT_MODEL_CONFIG`` of the example's settings under ``environment`` (a fresh process)."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))}
    code = "import json, example_project.settings as s; print(json.dumps(s.CHAT_MODEL_CONFIG))"
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**clean, **environment},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(done.stdout)


def test_the_example_reads_its_model_from_openai_or_anthropic_variables():
    assert example_model_config()["BACKEND"].endswith(".DemoAgent")
    anthropic = example_model_config(
        ANTHROPIC_API_KEY="sk-ant-test",
        ANTHROPIC_MODEL="claude-haiku-4-5",
        ANTHROPIC_BASE_URL="http://127.0.0.1:9/",
    )
    assert anthropic == {
        "BACKEND": "example_project.chat.llm.AnthropicModel",
        "OPTIONS": {
            "base_url": "http://127.0.0.1:9/",
            "api_key": "sk-ant-test",
            "model": "claude-haiku-4-5",
            "timeout": 60.0,
        },
    }
    assert example_model_config(ANTHROPIC_API_KEY="k")["OPTIONS"]["model"] == "claude-sonnet-4-6"
    # An OpenAI-compatible endpoint wins when both are set.
    both = example_model_config(OPENAI_BASE_URL="http://127.0.0.1:9/v1", ANTHROPIC_API_KEY="k")
    assert both["BACKEND"] == "example_project.chat.llm.OpenAICompatibleModel"
    assert both["OPTIONS"]["model"] == "gpt-5-mini"
