"""The OpenAI Agents SDK with memory, offline on the SDK's own ``ScriptedModel``: the model
calls ``manage_memory``, the note is saved, ``after_turn`` runs, and the next chat's instructions
carry the note."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("agents", reason='needs the "openai-agents" extra')

from agents import Agent, Runner, set_tracing_disabled
from agents.testing import ModelCall, ModelStep, ScriptedModel, assistant_message, function_call

from agent_memory import get_memory
from agent_memory.integrations.openai_agents import (
    MemoryContext,
    MemoryHooks,
    memory_instructions,
    memory_tool,
)
from agent_memory.models import OptimizerState

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def no_tracing():
    """The SDK would export traces to OpenAI; tests reach no network."""
    set_tracing_disabled(True)
    yield
    set_tracing_disabled(False)


SAVE = {"action": "create", "notes": [{"categories": ["Drinks"], "content": "Prefers green tea"}]}


def tool_outputs(call: ModelCall) -> list[dict]:
    return [
        json.loads(item["output"]) if isinstance(item["output"], str) else item["output"]
        for item in call.input
        if isinstance(item, dict) and item.get("type") == "function_call_output"
    ]


def test_an_agent_saves_a_note_and_the_next_chat_sees_it(user):
    def answer_with_the_saved_note(call: ModelCall):
        (output,) = tool_outputs(call)
        return [assistant_message(f"Saved memory:{output['notes'][0]['id']}")]

    model = ScriptedModel(
        [
            [function_call("manage_memory", SAVE, call_id="call-1")],
            ModelStep.respond(answer_with_the_saved_note),
            [assistant_message("You prefer green tea.")],
        ]
    )
    agent = Agent(
        name="Assistant",
        instructions=memory_instructions("You are a helpful assistant."),
        tools=[memory_tool()],
        model=model,
    )
    chat = MemoryContext(user=user, origin="chat:1")
    first = Runner.run_sync(
        agent, "Remember that I prefer green tea.", context=chat, hooks=MemoryHooks()
    )

    (note,) = get_memory().notes(user)
    assert note.content == "Prefers green tea" and note.source == "agent"
    assert first.final_output == f"Saved memory:{note.id}"
    first_call = model.calls[0]
    assert first_call.system_instructions.startswith("You are a helpful assistant.")
    assert "Prefers green tea" not in first_call.system_instructions
    assert [tool.name for tool in first_call.tools] == ["manage_memory"]
    # The turn hook recorded the person's activity for the optimizer.
    assert OptimizerState.objects.filter(user=user, last_activity_at__isnull=False).exists()

    second = Runner.run_sync(agent, "What do I drink?", context=MemoryContext(user=user))
    assert second.final_output == "You prefer green tea."
    assert f"memory:{note.id}" in model.calls[-1].system_instructions
    assert "Prefers green tea" in model.calls[-1].system_instructions
    model.assert_complete()


def test_a_bad_call_is_an_answer_the_model_reads(user):
    model = ScriptedModel(
        [
            [function_call("manage_memory", '{"action": "x"}', call_id="c")],
            ModelStep.respond(lambda call: [assistant_message(json.dumps(tool_outputs(call)))]),
        ]
    )
    agent = Agent(name="A", instructions=memory_instructions(), tools=[memory_tool()], model=model)
    result = Runner.run_sync(agent, "hi", context=MemoryContext(user=user))
    assert json.loads(result.final_output)[0]["error"]["kind"] == "invalid"
    assert get_memory().notes(user) == []
