"""django-agent-memory: long-term memory of the person an LLM agent talks to.

``from agent_memory import LongTermMemory`` is the front door; it is imported lazily so that this
package can be named in ``INSTALLED_APPS`` before Django's app registry is ready.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .memory import LongTermMemory
    from .prompt import Block, Turn

__all__ = ["Block", "LongTermMemory", "Turn"]


def __getattr__(name: str) -> Any:
    if name == "LongTermMemory":
        from .memory import LongTermMemory

        return LongTermMemory
    if name in ("Block", "Turn"):
        from . import prompt

        return getattr(prompt, name)
    raise AttributeError(f"module 'agent_memory' has no attribute {name!r}")
