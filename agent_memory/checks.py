"""System checks for ``settings.AGENT_MEMORY`` (ids ``agent_memory.E001``…), and warnings
(``agent_memory.W001``, ``W002``) when the optimizer is on but could never run: django-q2 has no
usable broker, or ``MODELS`` lacks the alias it runs with.

Misconfiguration is reported by ``manage.py check`` (and ``runserver``, ``migrate`` and every
management command that checks), never by a crash at import time. Each key's rule is in
:data:`RULES`; reading a setting (``agent_memory.conf``) applies none of them, so a value the
checks report is used as written until it is fixed.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.apps import apps
from django.conf import settings
from django.core.checks import Error, Warning, register
from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string

from .conf import DEFAULTS, OPTIMIZER_DEFAULTS, STORE_EXAMPLE, backend_class, memory_settings


def _error(id_: int, msg: str, hint: str) -> Error:
    return Error(msg, hint=hint or None, obj="settings.AGENT_MEMORY", id=f"agent_memory.E{id_:03d}")


# --- the rules: each gives the problems with a value, as whole sentences -----------------------


def _subscript(*keys: object) -> str:
    return "".join(f'["{key}"]' for key in keys)


def _where(*keys: object) -> str:
    return f"AGENT_MEMORY{_subscript(*keys)}"


def _whole_number(name: str, value: object) -> list[str]:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        return [f"{_where(name)} = {value!r} must be a whole number of 1 or more."]
    return []


def _boolean(name: str, value: object) -> list[str]:
    return [] if isinstance(value, bool) else [f"{_where(name)} = {value!r} must be True or False."]


def _optional_callable(name: str, value: object) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        try:
            if callable(import_string(value)):
                return []
        except Exception:  # a module that fails to import is as unusable as a missing one
            pass
    return [f"{_where(name)} = {value!r} cannot be imported as a function."]


def _optimizer(name: str, value: object) -> list[str]:
    if value is False:
        return []
    if not isinstance(value, dict):
        return [f"{_where(name)} = {value!r} must be a dict or False."]
    problems = []
    for key, number in value.items():
        if key not in OPTIMIZER_DEFAULTS:
            problems.append(f"{_where(name)} has an unknown key {key!r}.")
        elif isinstance(number, bool) or not isinstance(number, (int, float)) or number <= 0:
            problems.append(f"{_where(name, key)} = {number!r} must be a positive number.")
    return problems


_MODEL_EXAMPLE = (
    '{"BACKEND": "agent_memory.optimizer.backends.OpenAICompatibleBackend", '
    '"OPTIONS": {"model": "..."}}'
)
_EMBEDDINGS_EXAMPLE = '{"BACKEND": "agent_memory.embeddings.CombinedEmbeddings", "OPTIONS": {}}'


def _backend(key: str, config: object, example: str, only_known_keys: bool = False) -> list[str]:
    try:
        backend_class(key, config, example, only_known_keys)
    except ImproperlyConfigured as error:
        return [str(error)]
    return []


def _models(name: str, value: object) -> list[str]:
    if not isinstance(value, dict):
        return [f"{_where(name)} = {value!r} must be a dict of alias -> backend config."]
    return [
        problem
        for alias, config in value.items()
        for problem in _backend(_subscript(name, alias), config, _MODEL_EXAMPLE)
    ]


def _embeddings(name: str, value: object) -> list[str]:
    return [] if value is False else _backend(_subscript(name), value, _EMBEDDINGS_EXAMPLE)


def _store(name: str, value: object) -> list[str]:
    return _backend(_subscript(name), value, STORE_EXAMPLE, only_known_keys=True)


def _base_template(name: str, value: object) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, str) or not value.strip():
        return [f"{_where(name)} = {value!r} must be a template name or None."]
    from django.template import TemplateDoesNotExist
    from django.template.loader import get_template

    try:
        get_template(value)
    except TemplateDoesNotExist:
        return [f"{_where(name)} = {value!r} is not a template Django can find."]
    return []


@dataclass(frozen=True)
class Rule:
    """How one key of ``AGENT_MEMORY`` is checked: its check id, its rule and the hint."""

    check_id: int
    problems: Callable[[str, Any], list[str]]
    hint: str = ""


_LIMIT = Rule(3, _whole_number, "A whole number of 1 or more.")
_BACKEND_HINT = 'Use {"BACKEND": "dotted.path.Class", "OPTIONS": {...}}.'

RULES: dict[str, Rule] = {
    "ENABLED": Rule(4, _boolean),
    "MAX_NOTES": _LIMIT,
    "MAX_TOTAL_CHARS": _LIMIT,
    "MAX_BATCH": _LIMIT,
    "MAX_BLOCK_CHARS": _LIMIT,
    "SEARCH_LIMIT": _LIMIT,
    "RESOLVE_USER": Rule(
        5, _optional_callable, "Give a dotted path to a callable(request) -> user or None."
    ),
    "OPTIMIZER": Rule(
        6,
        _optimizer,
        f"Known keys: {', '.join(OPTIMIZER_DEFAULTS)}, each a positive number; or False.",
    ),
    "MODELS": Rule(7, _models, _BACKEND_HINT),
    "MERGE_RETENTION_DAYS": Rule(8, _whole_number, "A whole number of days, 1 or more."),
    "EMBEDDINGS": Rule(
        9, _embeddings, f"{_BACKEND_HINT[:-1]}, or False for word-stem search only."
    ),
    "BASE_TEMPLATE": Rule(
        10,
        _base_template,
        "Name your site's base template (it needs a {% block content %}), or remove the key "
        "to use the screen's own page.",
    ),
    "ORIGIN_URL": Rule(
        11,
        _optional_callable,
        "Give a dotted path to a callable(origin) -> URL or None, or remove the key.",
    ),
    "MAX_CONCURRENT_IMPORTS": Rule(
        13,
        _whole_number,
        "A whole number of 1 or more: how many imports the site runs at once (default 1).",
    ),
    "STORE": Rule(
        12,
        _store,
        f"Write {STORE_EXAMPLE} (the default), or name "
        "agent_memory.stores.in_memory.InMemoryStore or your own store class as its BACKEND.",
    ),
}
"""Every key's rule (one per key of ``agent_memory.conf.DEFAULTS``)."""


@register()
def check_agent_memory_settings(app_configs: Any = None, **kwargs: Any) -> list[Error]:
    value = getattr(settings, "AGENT_MEMORY", {})
    if not isinstance(value, dict):
        return [_error(1, "AGENT_MEMORY must be a dict.", "Set AGENT_MEMORY = {...} or remove it.")]
    errors: list[Error] = []
    unknown = sorted(set(map(str, value)) - set(DEFAULTS))
    if unknown:
        errors.append(
            _error(
                2,
                f"Unknown AGENT_MEMORY keys: {', '.join(unknown)}.",
                f"Known keys: {', '.join(DEFAULTS)}.",
            )
        )
    for name, rule in RULES.items():
        if name in value:
            errors.extend(
                _error(rule.check_id, problem, rule.hint)
                for problem in rule.problems(name, value[name])
            )
    return errors


# --- the optimizer's queue and model (warnings ``agent_memory.W001``…) ------------------------

#: ``Q_CLUSTER`` keys that choose a django-q2 broker, and the package each one needs.
_BROKERS = {
    "orm": None,
    "sqs": "boto3",
    "mongo": "pymongo",
    "iron_mq": "iron_mq",
}
#: What the README's "Installing into your project" sets: the database as the queue.
Q_CLUSTER_EXAMPLE = (
    'Q_CLUSTER = {"name": "agent_memory", "orm": "default", "timeout": 120, "retry": 180}'
)


def _warning(id_: int, msg: str, hint: str, obj: str) -> Warning:
    return Warning(msg, hint=hint, obj=obj, id=f"agent_memory.W{id_:03d}")


def _optimizer_on() -> bool:
    if not memory_settings.ENABLED or memory_settings.OPTIMIZER is False:
        return False
    try:
        from .site import get_memory

        return get_memory().optimizer_options is not None
    except Exception:  # a store that cannot be built is reported by its own check
        return False


def _importable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def broker_problem() -> str | None:
    """Why django-q2 cannot queue the optimizer's runs with this ``Q_CLUSTER``, or ``None``."""
    if not apps.is_installed("django_q"):
        return '"django_q" is not in INSTALLED_APPS, so nothing runs the optimizer\'s queue.'
    cluster = getattr(settings, "Q_CLUSTER", None)
    if not isinstance(cluster, dict):
        cluster = {}
    if cluster.get("broker_class"):
        try:
            import_string(str(cluster["broker_class"]))
        except ImportError:
            return f"Q_CLUSTER's broker_class {cluster['broker_class']!r} cannot be imported."
        return None
    for key, package in _BROKERS.items():
        if cluster.get(key):
            if key == "orm" and cluster["orm"] not in settings.DATABASES:
                return (
                    f'Q_CLUSTER["orm"] names the database {cluster["orm"]!r}, which is not in '
                    "DATABASES."
                )
            if package is not None and not _importable(package):
                return f'Q_CLUSTER["{key}"] needs the {package!r} package, which is not installed.'
            return None
    if not _importable("redis"):
        where = "has no broker" if cluster else "is not set"
        return (
            f"Q_CLUSTER {where}, so django-q2 uses its Redis broker, but the redis package is not "
            "installed: after_turn() cannot queue a run and the optimizer never runs."
        )
    return None


@register()
def check_optimizer_queue(app_configs: Any = None, **kwargs: Any) -> list[Warning]:
    """W001: the optimizer is on but django-q2 has no usable broker. W002: the optimizer is on
    but ``MODELS`` has no ``"default"`` alias, the one ``after_turn(user)`` runs it with."""
    if not isinstance(getattr(settings, "AGENT_MEMORY", {}), dict) or not _optimizer_on():
        return []
    found: list[Warning] = []
    problem = broker_problem()
    if problem is not None:
        found.append(
            _warning(
                1,
                f"The optimizer is on but django-q2 has no usable broker: {problem}",
                f"Use the database as the queue: {Q_CLUSTER_EXAMPLE} (and run manage.py "
                "qcluster), or install the redis package (the [redis] extra) for Redis, or set "
                'AGENT_MEMORY["OPTIMIZER"] = False.',
                "settings.Q_CLUSTER",
            )
        )
    models = memory_settings.MODELS
    if isinstance(models, dict) and "default" not in models:  # (E007 reports another kind)
        found.append(
            _warning(
                2,
                'The optimizer is on but AGENT_MEMORY["MODELS"] has no "default" alias, the model '
                "after_turn(user) runs it with: every run would fail.",
                'Add MODELS = {"default": {"BACKEND": "agent_memory.optimizer.backends.'
                'OpenAICompatibleBackend", "OPTIONS": {...}}}, pass model="<your alias>" to '
                'after_turn(), or set AGENT_MEMORY["OPTIMIZER"] = False.',
                "settings.AGENT_MEMORY",
            )
        )
    return found
