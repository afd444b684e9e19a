"""django-agent-memory: long-term memory of the person an LLM agent talks to.

``from agent_memory import LongTermMemory`` is the front door, and ``get_memory()`` the site's
memory on the store of ``AGENT_MEMORY["STORE"]``; both are imported lazily so that this package
can be named in ``INSTALLED_APPS`` before Django's app registry is ready.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .memory import LongTermMemory
    from .prompt import Block, Turn
    from .site import get_memory

__all__ = ["Block", "LongTermMemory", "Turn", "get_memory"]


def __getattr__(name: str) -> Any:
    if name == "LongTermMemory":
        from .memory import LongTermMemory

        return LongTermMemory
    if name == "get_memory":
        from .site import get_memory

        return get_memory
    if name in ("Block", "Turn"):
        from . import prompt

        return getattr(prompt, name)
    raise AttributeError(f"module 'agent_memory' has no attribute {name!r}")
