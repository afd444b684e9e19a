"""The app's settings, read lazily from ``settings.AGENT_MEMORY``.

Every attribute is looked up on access, so ``override_settings(AGENT_MEMORY=...)`` takes effect
at once, without a restart.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings

DEFAULTS: dict[str, Any] = {
    "ENABLED": True,
    "MAX_NOTES": 200,
    "MAX_TOTAL_CHARS": 48_000,
    "MAX_BATCH": 5,
    "MAX_BLOCK_CHARS": 12_000,
    "SEARCH_LIMIT": 10,
    "RESOLVE_USER": None,
    "OPTIMIZER": {
        "interval_hours": 24,
        "lease_minutes": 10,
        "sweep_minutes": 15,
        "max_call_chars": 12_000,
    },
    "MODELS": {},
    "MERGE_RETENTION_DAYS": 30,
    "ORIGIN_URL": None,
    "EMBEDDINGS": {"BACKEND": "agent_memory.embeddings.CombinedEmbeddings", "OPTIONS": {}},
    # The store of the site's memory (``agent_memory.get_memory()``), built with ``**OPTIONS``.
    "STORE": {"BACKEND": "agent_memory.stores.orm.DjangoStore", "OPTIONS": {}},
    # The host's base template the memory screen renders inside (its ``content`` block).
    "BASE_TEMPLATE": None,
}

LIMIT_KEYS = ("MAX_NOTES", "MAX_TOTAL_CHARS", "MAX_BATCH", "MAX_BLOCK_CHARS", "SEARCH_LIMIT")


@dataclass(frozen=True)
class Limits:
    """The per-user limits in force for one operation."""

    max_notes: int
    max_total_chars: int
    max_batch: int
    max_block_chars: int
    search_limit: int


class MemorySettings:
    """Attribute access to ``settings.AGENT_MEMORY`` with the documented defaults."""

    @property
    def user_settings(self) -> dict[str, Any]:
        value = getattr(settings, "AGENT_MEMORY", None)
        return value if isinstance(value, dict) else {}

    def __getattr__(self, name: str) -> Any:
        if name not in DEFAULTS:
            raise AttributeError(f"Unknown agent_memory setting: {name}")
        value = self.user_settings.get(name, DEFAULTS[name])
        # A value of the wrong kind is reported by the system checks (agent_memory.E003,
        # E006); until it is fixed the default stands in, so a typo does not crash requests.
        if name in LIMIT_KEYS and (isinstance(value, bool) or not isinstance(value, int)):
            return DEFAULTS[name]
        if name in LIMIT_KEYS and value < 1:
            return DEFAULTS[name]
        if name == "OPTIMIZER":
            if value is False:
                return False
            return {**DEFAULTS["OPTIMIZER"], **(value if isinstance(value, dict) else {})}
        if name == "STORE" and not is_backend_config(value):
            return DEFAULTS["STORE"]  # agent_memory.E012
        return value

    @property
    def limits(self) -> Limits:
        return Limits(
            max_notes=self.MAX_NOTES,
            max_total_chars=self.MAX_TOTAL_CHARS,
            max_batch=self.MAX_BATCH,
            max_block_chars=self.MAX_BLOCK_CHARS,
            search_limit=self.SEARCH_LIMIT,
        )


def is_backend_config(value: Any) -> bool:
    """Whether ``value`` has the shape ``{"BACKEND": "dotted.path", "OPTIONS": {...}}``
    (``OPTIONS`` may be left out); whether the path imports is for the checks to say."""
    return (
        isinstance(value, dict)
        and isinstance(value.get("BACKEND"), str)
        and isinstance(value.get("OPTIONS", {}), dict)
        and not set(value) - {"BACKEND", "OPTIONS"}
    )


memory_settings = MemorySettings()
