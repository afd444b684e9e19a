"""Memory for the OpenAI Agents SDK (``pip install "django-agent-memory[openai-agents]"``).

::

    from agent_memory.integrations.openai_agents import (
        MemoryContext, MemoryHooks, memory_instructions, memory_tool)

    agent = Agent(name="Assistant", instructions=memory_instructions("You are helpful."),
                  tools=[memory_tool()])
    context = MemoryContext(user=request.user, origin=f"chat:{chat.pk}")  # one per chat
    result = Runner.run_sync(agent, question, context=context, hooks=MemoryHooks())

:func:`memory_tool` is a ``FunctionTool`` named ``manage_memory`` with the tool's own JSON
Schema; its answers and errors are those of :meth:`~agent_memory.LongTermMemory.call_tool` (a
failure is an answer the model reads, never an exception), sent to the model as JSON text.
:func:`memory_instructions` adds the
memory instructions and the person's memory block to the agent's instructions; the block is read
once per :class:`MemoryContext` (keep one per chat, so the prompt stays the same for the chat and
the provider's cache keeps working; a new chat reads the block afresh). :class:`MemoryHooks`
calls :meth:`~agent_memory.LongTermMemory.after_turn` when the agent has answered, which records
the person's activity and, if due, enqueues the optimizer.

The SDK runs tools and hooks in its event loop; the memory operations run as Django's own async
ORM runs queries: ``sync_to_async`` with ``thread_sensitive=True`` (in a Django async view, in
the request's thread; under ``Runner.run_sync``, in asgiref's one thread for such calls, which
keeps one connection).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from agents import Agent, FunctionTool, RunContextWrapper, RunHooks
from agents.tool_context import ToolContext
from asgiref.sync import sync_to_async

from ..memory import LongTermMemory
from ..names import TOOL_NAME
from ..site import get_memory


@dataclass
class MemoryContext:
    """The run's context: whose memory, where the chat is (``origin``, stored on the notes it
    writes), optionally a memory other than the site's, and the block read for this chat."""

    user: Any
    origin: str = ""
    memory: LongTermMemory | None = field(default=None, repr=False)
    block: str | None = field(default=None, repr=False)

    def get_memory(self) -> LongTermMemory:
        return self.memory if self.memory is not None else get_memory()


def _context(wrapper: RunContextWrapper[Any]) -> MemoryContext:
    context = wrapper.context
    if isinstance(context, MemoryContext):
        return context
    raise TypeError(
        "The run's context must be a MemoryContext: Runner.run(agent, input, "
        "context=MemoryContext(user=...))."
    )


def memory_tool(memory: LongTermMemory | None = None) -> FunctionTool:
    """The ``manage_memory`` tool for an ``Agent(..., tools=[memory_tool()])``."""
    definition = (memory or get_memory()).tool_definition("json")
    schema = {key: value for key, value in definition.items() if key not in ("title", "$schema")}

    async def invoke(ctx: ToolContext[Any], arguments: str) -> str:
        context = _context(ctx)
        used = memory or context.get_memory()
        run = sync_to_async(used.call_tool, thread_sensitive=True)
        answer = await run(context.user, arguments, origin=context.origin)
        # The SDK hands the model str(output): the answer as JSON, as call_tool's callers send it.
        return json.dumps(answer, ensure_ascii=False)

    return FunctionTool(
        name=TOOL_NAME,
        description=str(definition.get("description") or ""),
        params_json_schema=schema,
        on_invoke_tool=invoke,
        # The schema allows optional fields, which strict mode would forbid; the tool checks
        # every argument itself and answers "invalid" with the expected shape.
        strict_json_schema=False,
    )


def memory_instructions(
    base: str = "",
) -> Callable[[RunContextWrapper[Any], Agent[Any]], Awaitable[str]]:
    """Dynamic ``instructions``: ``base``, then the memory instructions and the memory block."""

    async def instructions(wrapper: RunContextWrapper[Any], agent: Agent[Any]) -> str:
        context = _context(wrapper)
        memory = context.get_memory()
        if context.block is None:
            turn = await sync_to_async(memory.begin_turn, thread_sensitive=True)(context.user, None)
            context.block = turn.text
        parts = [base, memory.instructions, context.block]
        return "\n\n".join(part for part in parts if part)

    return instructions


class MemoryHooks(RunHooks[Any]):
    """Run hooks: after the agent's answer, ``after_turn`` for the context's person (with the
    optimizer's model alias ``model``)."""

    def __init__(self, model: str = "default") -> None:
        self.model = model

    async def on_agent_end(self, context: Any, agent: Any, output: Any) -> None:
        memory_context = _context(context)
        memory = memory_context.get_memory()
        await sync_to_async(memory.after_turn, thread_sensitive=True)(
            memory_context.user, self.model
        )


__all__ = ["MemoryContext", "MemoryHooks", "memory_instructions", "memory_tool"]
