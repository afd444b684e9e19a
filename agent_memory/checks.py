"""System checks for ``settings.AGENT_MEMORY`` (ids ``agent_memory.E001``…), and warnings
(``agent_memory.W001``, ``W002``) when the optimizer is on but could never run: django-q2 has no
usable broker, or ``MODELS`` lacks the alias it runs with.

Misconfiguration is reported by ``manage.py check`` (and every management command), never by a
crash at import time. Each key's rule and check id live with the key in ``agent_memory.conf``;
while a value breaks its rule, the app uses the key's default.
"""

from __future__ import annotations

import importlib.util
from typing import Any

from django.apps import apps
from django.conf import settings
from django.core.checks import Error, Warning, register
from django.utils.module_loading import import_string

from .conf import DEFAULTS, MemorySettings, memory_settings


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
    if "default" not in memory_settings.MODELS:
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
