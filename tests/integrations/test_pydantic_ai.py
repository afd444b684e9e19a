"""PydanticAI with memory, offline on PydanticAI's own ``FunctionModel``: the model calls
``manage_memory``, the note is saved, and the next chat's system prompt carries it."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("pydantic_ai", reason='needs the "pydantic-ai" extra (pydantic-ai-slim)')

from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from agent_memory import get_memory
from agent_memory.integrations.pydantic_ai import MemoryDeps, memory_system_prompt, memory_tool

pytestmark = pytest.mark.django_db(transaction=True)

SAVE = {"action": "create", "notes": [{"categories": ["Drinks"], "content": "Prefers green tea"}]}


def system_prompt_of(messages: list[ModelMessage]) -> str:
    return "\n".join(
        part.content
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, SystemPromptPart)
    )


def tool_returns(messages: list[ModelMessage]) -> list[ToolReturnPart]:
    return [
        part
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart)
    ]


def make_agent(seen: list[str]) -> Agent[MemoryDeps, str]:
    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(system_prompt_of(messages))
        (tool,) = info.function_tools
        assert (
            tool.name == "manage_memory" and "action" in tool.parameters_json_schema["properties"]
        )
        returns = tool_returns(messages)
        if "Prefers green tea" in seen[-1]:
            return ModelResponse(parts=[TextPart("You prefer green tea.")])
        if not returns:
            return ModelResponse(parts=[ToolCallPart("manage_memory", json.dumps(SAVE), "call-1")])
        return ModelResponse(parts=[TextPart(f"Saved: {json.dumps(returns[0].content)}")])

    agent = Agent(FunctionModel(model), deps_type=MemoryDeps, tools=[memory_tool()])
    agent.system_prompt(memory_system_prompt)
    return agent


def test_an_agent_saves_a_note_and_the_next_chat_sees_it(user):
    seen: list[str] = []
    agent = make_agent(seen)
    deps = MemoryDeps(user=user, origin="chat:1")

    first = agent.run_sync("Remember that I prefer green tea.", deps=deps)
    (note,) = get_memory().notes(user)
    assert note.content == "Prefers green tea" and note.source == "agent"
    assert json.loads(first.output.removeprefix("Saved: "))["notes"][0]["id"] == note.id
    assert "manage_memory" in seen[0] and "Prefers green tea" not in seen[0]

    second = agent.run_sync("What do I drink?", deps=MemoryDeps(user=user, origin="chat:2"))
    assert second.output == "You prefer green tea."
    assert f"memory:{note.id}" in seen[-1]


def test_a_bad_call_is_an_answer_the_model_reads(user):
    answers: list[object] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returns = tool_returns(messages)
        if not returns:
            return ModelResponse(parts=[ToolCallPart("manage_memory", '{"action": "x"}', "c")])
        answers.append(returns[0].content)
        return ModelResponse(parts=[TextPart("ok")])

    agent = Agent(FunctionModel(model), deps_type=MemoryDeps, tools=[memory_tool()])
    assert agent.run_sync("hi", deps=MemoryDeps(user=user)).output == "ok"
    assert answers[0]["error"]["kind"] == "invalid"
    assert get_memory().notes(user) == []
