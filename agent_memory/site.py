"""The site's memory: one :class:`~agent_memory.LongTermMemory` on the store that
``AGENT_MEMORY["STORE"]`` names.

The HTTP API, the memory screen, admin, the django-q2 tasks and the management commands all take
their memory from :func:`get_memory`, so changing the store for the whole site is one setting.
``LongTermMemory()`` chooses its store the same way (:func:`build_store`). The site's memory is
built once and kept (an in-process store keeps its notes between requests); a change of
``AGENT_MEMORY`` (``override_settings`` in tests) builds it again.

A setting that names no store raises ``ImproperlyConfigured`` saying what to write, here and
in the system check ``agent_memory.E012``; the default store never stands in for a mistyped one.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from django.core.signals import setting_changed
from django.dispatch import receiver

from .conf import build_store

if TYPE_CHECKING:
    from .memory import LongTermMemory

_lock = threading.Lock()
_memory: LongTermMemory | None = None


def get_memory() -> LongTermMemory:
    """The site's memory: ``LongTermMemory()``, on the store of ``AGENT_MEMORY["STORE"]`` with
    the optimizer as ``AGENT_MEMORY["OPTIMIZER"]`` says (on when the store can merge)."""
    global _memory
    memory = _memory
    if memory is None:
        from .memory import LongTermMemory

        with _lock:
            memory = _memory
            if memory is None:
                memory = _memory = LongTermMemory()
    return memory


@receiver(setting_changed, dispatch_uid="agent_memory.site.forget_memory")
def forget_memory(setting: str = "", **kwargs: Any) -> None:
    """Build the site's memory again after ``AGENT_MEMORY`` changes."""
    global _memory
    if setting == "AGENT_MEMORY":
        with _lock:
            _memory = None


__all__ = ["build_store", "get_memory"]
