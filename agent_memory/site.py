"""The site's memory: one :class:`~agent_memory.LongTermMemory` on the store that
``AGENT_MEMORY["STORE"]`` names.

The HTTP API, the memory screen, admin, the django-q2 tasks and the management commands all take
their memory from :func:`get_memory`, so changing the store for the whole site is one setting.
The store is built once and kept (an in-process store keeps its notes between requests); a
change of ``AGENT_MEMORY`` (``override_settings`` in tests) builds it again.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from django.core.signals import setting_changed
from django.dispatch import receiver
from django.utils.module_loading import import_string

from .conf import memory_settings

if TYPE_CHECKING:
    from .memory import LongTermMemory

_lock = threading.Lock()
_memory: LongTermMemory | None = None


def build_store(**options: Any) -> Any:
    """A new store as ``AGENT_MEMORY["STORE"]`` configures it; ``options`` override its
    ``OPTIONS`` (e.g. ``using`` for a django-q2 task enqueued for one database)."""
    # A path that does not import is already replaced by the default (check E012 reports it).
    config = memory_settings.STORE
    backend = import_string(config["BACKEND"])
    return backend(**{**config.get("OPTIONS", {}), **options})


def get_memory() -> LongTermMemory:
    """The site's memory: the store of ``AGENT_MEMORY["STORE"]`` with the optimizer as
    ``AGENT_MEMORY["OPTIMIZER"]`` says (on when the store can merge)."""
    global _memory
    memory = _memory
    if memory is None:
        from .memory import LongTermMemory

        with _lock:
            memory = _memory
            if memory is None:
                memory = _memory = LongTermMemory(store=build_store())
    return memory


@receiver(setting_changed, dispatch_uid="agent_memory.site.forget_memory")
def forget_memory(setting: str = "", **kwargs: Any) -> None:
    """Build the site's memory again after ``AGENT_MEMORY`` changes."""
    global _memory
    if setting == "AGENT_MEMORY":
        with _lock:
            _memory = None


__all__ = ["build_store", "get_memory"]
