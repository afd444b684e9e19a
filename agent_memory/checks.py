"""System checks for ``settings.AGENT_MEMORY`` (ids ``agent_memory.E001``…).

Misconfiguration is reported by ``manage.py check`` (and every management command), never by a
crash at import time. Each key's rule and check id live with the key in ``agent_memory.conf``;
while a value breaks its rule, the app uses the key's default.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import Error, register

from .conf import DEFAULTS, MemorySettings


def _error(id_: int, msg: str, hint: str) -> Error:
    return Error(msg, hint=hint or None, obj="settings.AGENT_MEMORY", id=f"agent_memory.E{id_:03d}")


@register()
def check_agent_memory_settings(app_configs: Any = None, **kwargs: Any) -> list[Error]:
    value = getattr(settings, "AGENT_MEMORY", {})
    if not isinstance(value, dict):
        return [_error(1, "AGENT_MEMORY must be a dict.", "Set AGENT_MEMORY = {...} or remove it.")]
    errors: list[Error] = []
    unknown = sorted(set(value) - set(DEFAULTS))
    if unknown:
        errors.append(
            _error(
                2,
                f"Unknown AGENT_MEMORY keys: {', '.join(map(str, unknown))}.",
                f"Known keys: {', '.join(DEFAULTS)}.",
            )
        )
    for key in MemorySettings.keys():
        if key.name in value:
            errors.extend(
                _error(key.check_id, problem, key.hint) for problem in key.problems(value[key.name])
            )
    return errors
