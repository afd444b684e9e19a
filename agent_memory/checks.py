"""System checks for ``settings.AGENT_MEMORY`` (ids ``agent_memory.E001``…).

Misconfiguration is reported by ``manage.py check`` (and every management command), never by a
crash at import time.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import Error, register
from django.utils.module_loading import import_string

from .conf import DEFAULTS, LIMIT_KEYS, is_backend_config

OPTIMIZER_KEYS = tuple(DEFAULTS["OPTIMIZER"])


def _error(id_: int, msg: str, hint: str) -> Error:
    return Error(msg, hint=hint, obj="settings.AGENT_MEMORY", id=f"agent_memory.E{id_:03d}")


def _importable(path: Any) -> bool:
    """Whether ``path`` is a dotted path to something callable (a function or a class)."""
    if not isinstance(path, str) or "." not in path:
        return False
    try:
        target = import_string(path)
    except Exception:  # a module that fails to import is as unusable as a missing one
        return False
    return callable(target)


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
    for key in LIMIT_KEYS:
        limit = value.get(key, DEFAULTS[key])
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            errors.append(
                _error(
                    3,
                    f"AGENT_MEMORY[{key!r}] must be a whole number of 1 or more.",
                    f"The default is {DEFAULTS[key]}.",
                )
            )
    if not isinstance(value.get("ENABLED", True), bool):
        errors.append(_error(4, "AGENT_MEMORY['ENABLED'] must be True or False.", ""))
    resolver = value.get("RESOLVE_USER")
    if resolver is not None and not _importable(resolver):
        errors.append(
            _error(
                5,
                f"AGENT_MEMORY['RESOLVE_USER'] = {resolver!r} cannot be imported.",
                "Give a dotted path to a callable(request) -> user or None.",
            )
        )
    optimizer = value.get("OPTIMIZER", DEFAULTS["OPTIMIZER"])
    if optimizer is not False:
        if not isinstance(optimizer, dict):
            errors.append(_error(6, "AGENT_MEMORY['OPTIMIZER'] must be a dict or False.", ""))
        else:
            for key, number in optimizer.items():
                if key not in OPTIMIZER_KEYS:
                    errors.append(
                        _error(
                            6,
                            f"Unknown OPTIMIZER key {key!r}.",
                            f"Known keys: {', '.join(OPTIMIZER_KEYS)}.",
                        )
                    )
                elif (
                    isinstance(number, bool) or not isinstance(number, (int, float)) or number <= 0
                ):
                    errors.append(_error(6, f"OPTIMIZER[{key!r}] must be a positive number.", ""))
    models = value.get("MODELS", {})
    if not isinstance(models, dict):
        errors.append(_error(7, "AGENT_MEMORY['MODELS'] must be a dict of alias -> config.", ""))
    else:
        for alias, config in models.items():
            backend = config.get("BACKEND") if isinstance(config, dict) else None
            if not _importable(backend):
                errors.append(
                    _error(
                        7,
                        f"AGENT_MEMORY['MODELS'][{alias!r}] has no importable BACKEND.",
                        'Use {"BACKEND": "dotted.path.Class", "OPTIONS": {...}}.',
                    )
                )
            elif not isinstance(config.get("OPTIONS", {}), dict):
                errors.append(
                    _error(7, f"AGENT_MEMORY['MODELS'][{alias!r}]['OPTIONS'] must be a dict.", "")
                )
    embeddings = value.get("EMBEDDINGS", DEFAULTS["EMBEDDINGS"])
    if embeddings is not False and not (
        isinstance(embeddings, dict)
        and _importable(embeddings.get("BACKEND"))
        and isinstance(embeddings.get("OPTIONS", {}), dict)
    ):
        errors.append(
            _error(
                9,
                "AGENT_MEMORY['EMBEDDINGS'] must be False or a config with an importable BACKEND.",
                'Use {"BACKEND": "dotted.path.Class", "OPTIONS": {...}}, or False for word-stem '
                "search only.",
            )
        )
    retention = value.get("MERGE_RETENTION_DAYS", DEFAULTS["MERGE_RETENTION_DAYS"])
    if isinstance(retention, bool) or not isinstance(retention, int) or retention < 1:
        errors.append(
            _error(
                8,
                "AGENT_MEMORY['MERGE_RETENTION_DAYS'] must be a whole number of days, 1 or more.",
                "",
            )
        )
    origin_url = value.get("ORIGIN_URL")
    if origin_url is not None and not _importable(origin_url):
        errors.append(
            _error(
                11,
                f"AGENT_MEMORY['ORIGIN_URL'] = {origin_url!r} cannot be imported.",
                "Give a dotted path to a callable(origin) -> URL or None, or remove the key.",
            )
        )
    errors.extend(_check_base_template(value.get("BASE_TEMPLATE")))
    errors.extend(_check_store(value.get("STORE", DEFAULTS["STORE"])))
    return errors


def _check_store(config: Any) -> list[Error]:
    if is_backend_config(config) and _importable(config["BACKEND"]):
        return []
    return [
        _error(
            12,
            "AGENT_MEMORY['STORE'] must be a config with an importable BACKEND.",
            'Use {"BACKEND": "dotted.path.Store", "OPTIONS": {...}}, e.g. '
            '"agent_memory.stores.orm.DjangoStore" (the default).',
        )
    ]


def _check_base_template(name: Any) -> list[Error]:
    if name is None:
        return []
    if not isinstance(name, str) or not name.strip():
        return [_error(10, "AGENT_MEMORY['BASE_TEMPLATE'] must be a template name or None.", "")]
    from django.template import TemplateDoesNotExist
    from django.template.loader import get_template

    try:
        get_template(name)
    except TemplateDoesNotExist:
        return [
            _error(
                10,
                f"AGENT_MEMORY['BASE_TEMPLATE'] = {name!r} is not a template Django can find.",
                "Name your site's base template (it needs a {% block content %}), or remove "
                "the key to use the screen's own page.",
            )
        ]
    return []
