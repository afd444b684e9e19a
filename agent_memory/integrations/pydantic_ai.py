"""Memory for PydanticAI agents (``pip install "django-agent-memory[pydantic-ai]"``).

::

    from agent_memory.integrations.pydantic_ai import MemoryDeps, memory_system_prompt, memory_tool

    agent = Agent(model, deps_type=MemoryDeps, tools=[memory_tool()])
    agent.system_prompt(memory_system_prompt)
    result = agent.run_sync(question, deps=MemoryDeps(user=request.user, origin=f"chat:{chat.pk}"))
    get_memory().after_turn(request.user)

:func:`memory_tool` is ``manage_memory`` with its own JSON Schema; its answers and errors are
those of :meth:`~agent_memory.LongTermMemory.call_tool` (a failure is an answer the model reads,
never an exception). :func:`memory_system_prompt` gives the memory instructions and the
person's memory block; PydanticAI evaluates a (non-dynamic) system prompt only when a chat
starts, so the block stays the same for the whole chat (the provider's prompt cache keeps
working) and the next chat sees what this one saved.

The memory operations run as Django's own async ORM runs queries: ``sync_to_async`` with
``thread_sensitive=True`` (in a Django async view, in the request's thread; under
``agent.run_sync``, in asgiref's one thread for such calls, which keeps one connection).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from asgiref.sync import sync_to_async
from pydantic_ai import RunContext, Tool

from ..memory import LongTermMemory
from ..names import TOOL_NAME
from ..site import get_memory


@dataclass
class MemoryDeps:
    """The run's dependencies: whose memory, where the chat is (``origin``, stored on the notes
    it writes, e.g. ``chat:42``), and optionally a memory other than the site's."""

    user: Any
    origin: str = ""
    memory: LongTermMemory | None = field(default=None, repr=False)

    def get_memory(self) -> LongTermMemory:
        return self.memory if self.memory is not None else get_memory()


def _deps(ctx: RunContext[Any]) -> MemoryDeps:
    deps = ctx.deps
    if isinstance(deps, MemoryDeps):
        return deps
    user = getattr(deps, "user", None)
    if user is None:
        raise TypeError(
            "The agent's deps need the person: pass deps=MemoryDeps(user=...) (or an object with "
            "a .user attribute) to agent.run()."
        )
    return MemoryDeps(user=user, origin=str(getattr(deps, "origin", "") or ""))


def memory_tool(memory: LongTermMemory | None = None) -> Tool[Any]:
    """The ``manage_memory`` tool for an ``Agent(..., tools=[memory_tool()])``."""
    definition = (memory or get_memory()).tool_definition("json")
    schema = {key: value for key, value in definition.items() if key not in ("title", "$schema")}

    async def manage_memory(ctx: RunContext[Any], **arguments: Any) -> dict[str, Any]:
        deps = _deps(ctx)
        used = memory or deps.get_memory()
        run = sync_to_async(used.call_tool, thread_sensitive=True)
        answer: dict[str, Any] = await run(deps.user, arguments, origin=deps.origin)
        return answer

    return Tool.from_schema(
        manage_memory,
        name=TOOL_NAME,
        description=str(definition.get("description") or ""),
        json_schema=schema,
        takes_ctx=True,
    )


async def memory_system_prompt(ctx: RunContext[Any]) -> str:
    """The memory instructions and the person's memory block, for ``agent.system_prompt``."""
    deps = _deps(ctx)
    memory = deps.get_memory()
    turn = await sync_to_async(memory.begin_turn, thread_sensitive=True)(deps.user, None)
    block = turn.text
    return f"{memory.instructions}\n\n{block}" if block else memory.instructions


__all__ = ["MemoryDeps", "memory_system_prompt", "memory_tool"]
