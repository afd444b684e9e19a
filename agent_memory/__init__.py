"""django-agent-memory: long-term memory of the person an LLM agent talks to.

Shells (``api``, ``screen``, ``admin``, commands, tasks) call the front door, ``LongTermMemory``;
it composes the features (``tool``, ``prompt``, ``transfer``, ``optimizer``) over ``stores``;
all of them check notes with the plain ``rules`` over ``notes``. Imports only go down.

``from agent_memory import LongTermMemory`` and ``get_memory()`` (the site's memory, on the store
of ``AGENT_MEMORY["STORE"]``) are imported lazily so that this package can be named in
``INSTALLED_APPS`` before Django's app registry is ready.
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
