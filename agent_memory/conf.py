"""The app's settings, read lazily from ``settings.AGENT_MEMORY``.

Each key is one :class:`Setting` on :class:`MemorySettings`. Reading a key
(``memory_settings.MAX_NOTES``) gives the value the host wrote, or the key's default when the
host left it out: nothing more. Whether a value is valid is for the system checks
(``agent_memory.checks``), which ``manage.py check``, ``runserver`` and ``migrate`` run once.
Every attribute is looked up on access, so ``override_settings(AGENT_MEMORY=...)`` takes effect
at once, without a restart.

Dotted paths named by the settings are imported through :func:`imported`: once per path until
``AGENT_MEMORY`` changes, not on every use.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar, cast, overload

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.utils.module_loading import import_string

T = TypeVar("T")

OptimizerOptions = dict[str, float]
BackendConfig = dict[str, Any]
"""``{"BACKEND": "dotted.path.Class", "OPTIONS": {...}}``, like ``CACHES``."""

OPTIMIZER_DEFAULTS: Mapping[str, float] = MappingProxyType(
    {"interval_hours": 24, "lease_minutes": 10, "sweep_minutes": 15, "max_call_chars": 12_000}
)

DEFAULT_STORE = "agent_memory.stores.orm.DjangoStore"
STORE_EXAMPLE = f'{{"BACKEND": "{DEFAULT_STORE}", "OPTIONS": {{}}}}'
"""What to write for ``AGENT_MEMORY["STORE"]``: the default store."""


@dataclass(frozen=True)
class Limits:
    """The per-user limits in force for one operation."""

    max_notes: int
    max_total_chars: int
    max_batch: int
    max_block_chars: int
    search_limit: int


# --- the keys ---------------------------------------------------------------------------------


class Setting(Generic[T]):
    """One key of ``AGENT_MEMORY`` and its default.

    ``clean`` turns the value read into the one the app uses (e.g. fills in left-out options);
    it must accept any value, since values are checked by the system checks, not here.
    """

    def __init__(self, default: T, clean: Callable[[Any], Any] | None = None) -> None:
        self.default = default
        self.clean = clean
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, instance: None, owner: type) -> Setting[T]: ...

    @overload
    def __get__(self, instance: MemorySettings, owner: type) -> T: ...

    def __get__(self, instance: MemorySettings | None, owner: type) -> Setting[T] | T:
        if instance is None:
            return self
        given = instance.user_settings
        if self.name in given:
            value = given[self.name]
        elif isinstance(self.default, dict):
            # A copy, so that a caller changing it changes nothing for the next.
            value = copy.deepcopy(self.default)
        else:
            value = self.default
        return cast(T, self.clean(value) if self.clean else value)


def _optimizer_with_defaults(value: Any) -> Any:
    # Keys the host leaves out keep their default.
    return {**OPTIMIZER_DEFAULTS, **value} if isinstance(value, dict) else value


class MemorySettings:
    """Typed attribute access to ``settings.AGENT_MEMORY``: each key's value or its default."""

    ENABLED = Setting[bool](True)
    MAX_NOTES = Setting[int](200)
    MAX_TOTAL_CHARS = Setting[int](48_000)
    MAX_BATCH = Setting[int](5)
    MAX_BLOCK_CHARS = Setting[int](12_000)
    SEARCH_LIMIT = Setting[int](10)
    # Imports the site runs at once, over every worker and server (the rest answer 429).
    MAX_CONCURRENT_IMPORTS = Setting[int](1)
    # A dotted path to callable(request) -> user or None; None: the authenticated request.user.
    RESOLVE_USER = Setting[str | None](None)
    OPTIMIZER = Setting[OptimizerOptions | Literal[False]](
        dict(OPTIMIZER_DEFAULTS), clean=_optimizer_with_defaults
    )
    MODELS = Setting[dict[str, BackendConfig]]({})
    MERGE_RETENTION_DAYS = Setting[int](30)
    # A dotted path to callable(origin) -> URL or None.
    ORIGIN_URL = Setting[str | None](None)
    EMBEDDINGS = Setting[BackendConfig | Literal[False]](
        {"BACKEND": "agent_memory.embeddings.CombinedEmbeddings", "OPTIONS": {}}
    )
    # The store of the site's memory and of ``LongTermMemory()``, built with ``**OPTIONS``.
    STORE = Setting[BackendConfig]({"BACKEND": DEFAULT_STORE, "OPTIONS": {}})
    # The host's base template the memory screen renders inside (its ``content`` block).
    BASE_TEMPLATE = Setting[str | None](None)

    @classmethod
    def keys(cls) -> Iterator[Setting[Any]]:
        """Every key, in the order above."""
        for value in vars(cls).values():
            if isinstance(value, Setting):
                yield value

    @property
    def user_settings(self) -> dict[str, Any]:
        """``settings.AGENT_MEMORY`` as given, or ``{}`` when it is missing or not a dict
        (check ``agent_memory.E001`` reports the latter)."""
        value = getattr(settings, "AGENT_MEMORY", None)
        return value if isinstance(value, dict) else {}

    @property
    def limits(self) -> Limits:
        return Limits(
            max_notes=self.MAX_NOTES,
            max_total_chars=self.MAX_TOTAL_CHARS,
            max_batch=self.MAX_BATCH,
            max_block_chars=self.MAX_BLOCK_CHARS,
            search_limit=self.SEARCH_LIMIT,
        )

    if not TYPE_CHECKING:  # (so that mypy still flags a misspelt key)

        def __getattr__(self, name: str) -> Any:
            # Only reached for names that are not keys: say so, not Python's generic message.
            raise AttributeError(f"Unknown agent_memory setting: {name}")


DEFAULTS: Mapping[str, Any] = MappingProxyType(
    {key.name: key.default for key in MemorySettings.keys()}
)
"""Every key with its default (the README's settings table lists exactly these); read-only."""

memory_settings = MemorySettings()


# --- dotted paths and backends ----------------------------------------------------------------


@lru_cache(maxsize=64)
def imported(path: str) -> Any:
    """The object at the dotted ``path``, imported once until ``AGENT_MEMORY`` changes.

    Raises ``ImportError`` (not cached) when the path does not import.
    """
    return import_string(path)


def import_setting(name: str, path: str) -> Any:
    """The object at ``path``, the dotted path written as ``AGENT_MEMORY[name]``, imported once
    (:func:`imported`); ``ImproperlyConfigured`` saying what to fix when it does not import."""
    try:
        return imported(path)
    except ImportError as error:
        raise ImproperlyConfigured(
            f'AGENT_MEMORY["{name}"] = {path!r} cannot be imported ({error}): write the dotted '
            "path of your function (manage.py check reports the same), or remove the key."
        ) from error


@receiver(setting_changed, dispatch_uid="agent_memory.conf.forget_imports")
def forget_imports(setting: str = "", **kwargs: Any) -> None:
    """Import the settings' dotted paths afresh after ``AGENT_MEMORY`` changes."""
    if setting == "AGENT_MEMORY":
        imported.cache_clear()


def backend_class(key: str, config: object, example: str, only_known_keys: bool = False) -> Any:
    """The callable that ``config``, the value of ``AGENT_MEMORY`` + ``key`` (e.g.
    ``'["STORE"]'``), names as ``{"BACKEND": "dotted.path", "OPTIONS": {...}}``.

    Raises ``ImproperlyConfigured`` saying what is wrong and what to write (``example``).
    ``only_known_keys``: a key besides ``BACKEND`` and ``OPTIONS`` is an error too.
    """
    where = f"AGENT_MEMORY{key}"
    if isinstance(config, str):
        raise ImproperlyConfigured(
            f"{where} is the string {config!r}, not a backend config: write "
            f'{{"BACKEND": {json.dumps(config)}, "OPTIONS": {{}}}}.'
        )
    if not isinstance(config, dict) or not isinstance(config.get("BACKEND"), str):
        raise ImproperlyConfigured(
            f'{where} = {config!r} has no "BACKEND" dotted path: write {example}.'
        )
    extra = sorted(map(str, set(config) - {"BACKEND", "OPTIONS"}))
    if only_known_keys and extra:
        raise ImproperlyConfigured(
            f'{where} has keys besides "BACKEND" and "OPTIONS" ({", ".join(extra)}): put the '
            'backend\'s arguments inside "OPTIONS", e.g. {"BACKEND": ..., "OPTIONS": '
            f"{{{json.dumps(extra[0])}: ...}}}}."
        )
    if not isinstance(config.get("OPTIONS", {}), dict):
        raise ImproperlyConfigured(
            f'{where}["OPTIONS"] = {config["OPTIONS"]!r} is not a dict: write the backend\'s '
            'keyword arguments as a dict, e.g. "OPTIONS": {}.'
        )
    path = config["BACKEND"]
    try:
        target = imported(path)
    except ImportError as error:
        raise ImproperlyConfigured(
            f'{where}["BACKEND"] = {path!r} cannot be imported ({error}): check the dotted '
            f"path, e.g. {example}."
        ) from error
    if not callable(target):
        raise ImproperlyConfigured(
            f'{where}["BACKEND"] = {path!r} is not a class or function: name the backend\'s '
            f"class by its dotted path, e.g. {example}."
        )
    return target


def build_store(**options: Any) -> Any:
    """A new store as ``AGENT_MEMORY["STORE"]`` configures it; ``options`` override its
    ``OPTIONS`` (e.g. ``using`` for a django-q2 task enqueued for one database).

    Raises ``ImproperlyConfigured`` saying what to write when the setting names no store
    (the system check ``agent_memory.E012`` reports the same at startup).
    """
    config = memory_settings.STORE
    store_class = backend_class('["STORE"]', config, STORE_EXAMPLE, only_known_keys=True)
    return store_class(**{**config.get("OPTIONS", {}), **options})
