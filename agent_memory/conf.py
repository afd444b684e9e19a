"""The app's settings, read lazily from ``settings.AGENT_MEMORY``.

Each key is one :class:`Setting` on :class:`MemorySettings`: its default, its system check id and
its one validity rule. Reading a key (``memory_settings.MAX_NOTES``) applies the rule and gives
the default for a value the rule refuses, so a typo never breaks requests; the system checks
(``agent_memory.checks``) report the same rule's problems. Every attribute is looked up on
access, so ``override_settings(AGENT_MEMORY=...)`` takes effect at once, without a restart.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar, cast, overload

from django.conf import settings

T = TypeVar("T")

Rule = Callable[[Any], list[str]]
"""The problems with a value, each the end of a sentence that starts ``AGENT_MEMORY['KEY']``;
none means the value is valid."""

OptimizerOptions = dict[str, float]
BackendConfig = dict[str, Any]
"""``{"BACKEND": "dotted.path.Class", "OPTIONS": {...}}``, like ``CACHES``."""

OPTIMIZER_DEFAULTS: OptimizerOptions = {
    "interval_hours": 24,
    "lease_minutes": 10,
    "sweep_minutes": 15,
    "max_call_chars": 12_000,
}


@dataclass(frozen=True)
class Limits:
    """The per-user limits in force for one operation."""

    max_notes: int
    max_total_chars: int
    max_batch: int
    max_block_chars: int
    search_limit: int


# --- the rules --------------------------------------------------------------------------------


def importable(path: object) -> bool:
    """Whether ``path`` is a dotted path to something callable (a function or a class)."""
    if not isinstance(path, str) or "." not in path:
        return False
    from django.utils.module_loading import import_string

    try:
        target = import_string(path)
    except Exception:  # a module that fails to import is as unusable as a missing one
        return False
    return callable(target)


def _whole_number(value: object) -> list[str]:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        return [" must be a whole number of 1 or more."]
    return []


def _boolean(value: object) -> list[str]:
    return [] if isinstance(value, bool) else [" must be True or False."]


def _optional_callable(value: object) -> list[str]:
    if value is None or importable(value):
        return []
    return [f" = {value!r} cannot be imported."]


def _optimizer(value: object) -> list[str]:
    if value is False:
        return []
    if not isinstance(value, dict):
        return [" must be a dict or False."]
    problems = []
    for key, number in value.items():
        if key not in OPTIMIZER_DEFAULTS:
            problems.append(f" has an unknown key {key!r}.")
        elif isinstance(number, bool) or not isinstance(number, (int, float)) or number <= 0:
            problems.append(f"[{key!r}] must be a positive number.")
    return problems


def _backend_config(config: object) -> list[str]:
    if not isinstance(config, dict) or not importable(config.get("BACKEND")):
        return [" has no importable BACKEND."]
    if not isinstance(config.get("OPTIONS", {}), dict):
        return ["['OPTIONS'] must be a dict."]
    return []


def _models(value: object) -> list[str]:
    if not isinstance(value, dict):
        return [" must be a dict of alias -> config."]
    return [
        f"[{alias!r}]{problem}"
        for alias, config in value.items()
        for problem in _backend_config(config)
    ]


def _embeddings(value: object) -> list[str]:
    if value is False or not _backend_config(value):
        return []
    return [" must be False or a config with an importable BACKEND."]


def is_backend_config(value: object) -> bool:
    """Whether ``value`` has the shape ``{"BACKEND": "dotted.path", "OPTIONS": {...}}``
    (``OPTIONS`` may be left out), whether or not the path imports."""
    return (
        isinstance(value, dict)
        and isinstance(value.get("BACKEND"), str)
        and isinstance(value.get("OPTIONS", {}), dict)
        and not set(value) - {"BACKEND", "OPTIONS"}
    )


def _store(value: object) -> list[str]:
    if isinstance(value, dict) and is_backend_config(value) and importable(value["BACKEND"]):
        return []
    return [" must be a config with an importable BACKEND."]


def _base_template(value: object) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, str) or not value.strip():
        return [" must be a template name or None."]
    from django.template import TemplateDoesNotExist
    from django.template.loader import get_template

    try:
        get_template(value)
    except TemplateDoesNotExist:
        return [f" = {value!r} is not a template Django can find."]
    return []


def _optimizer_with_defaults(value: OptimizerOptions | Literal[False]) -> Any:
    # Keys the host leaves out keep their default.
    return False if value is False else {**OPTIMIZER_DEFAULTS, **value}


# --- the keys ---------------------------------------------------------------------------------


class Setting(Generic[T]):
    """One key of ``AGENT_MEMORY``: its default, its check id and its validity rule.

    ``clean`` turns a valid value into the one the app uses (e.g. fills in left-out options).
    """

    def __init__(
        self,
        default: T,
        check_id: int,
        rule: Rule,
        hint: str = "",
        clean: Callable[[T], T] | None = None,
    ) -> None:
        self.default = default
        self.check_id = check_id
        self.rule = rule
        self.hint = hint
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
        # The default is read from DEFAULTS, not self.default, so a test run can switch it.
        value = instance.user_settings.get(self.name, DEFAULTS[self.name])
        if self.rule(value):
            value = DEFAULTS[self.name]
        return self.clean(value) if self.clean else cast(T, value)

    def problems(self, value: object) -> list[str]:
        """The rule's problems with ``value``, as whole sentences."""
        return [f"AGENT_MEMORY[{self.name!r}]{problem}" for problem in self.rule(value)]


_LIMIT_HINT = "A whole number of 1 or more."
_BACKEND_HINT = 'Use {"BACKEND": "dotted.path.Class", "OPTIONS": {...}}.'


class MemorySettings:
    """Typed attribute access to ``settings.AGENT_MEMORY``, each key checked by its rule."""

    ENABLED = Setting[bool](True, 4, _boolean)
    MAX_NOTES = Setting[int](200, 3, _whole_number, _LIMIT_HINT)
    MAX_TOTAL_CHARS = Setting[int](48_000, 3, _whole_number, _LIMIT_HINT)
    MAX_BATCH = Setting[int](5, 3, _whole_number, _LIMIT_HINT)
    MAX_BLOCK_CHARS = Setting[int](12_000, 3, _whole_number, _LIMIT_HINT)
    SEARCH_LIMIT = Setting[int](10, 3, _whole_number, _LIMIT_HINT)
    RESOLVE_USER = Setting[str | None](
        None, 5, _optional_callable, "Give a dotted path to a callable(request) -> user or None."
    )
    OPTIMIZER = Setting[OptimizerOptions | Literal[False]](
        dict(OPTIMIZER_DEFAULTS),
        6,
        _optimizer,
        f"Known keys: {', '.join(OPTIMIZER_DEFAULTS)}, each a positive number; or False.",
        clean=_optimizer_with_defaults,
    )
    MODELS = Setting[dict[str, BackendConfig]]({}, 7, _models, _BACKEND_HINT)
    MERGE_RETENTION_DAYS = Setting[int](30, 8, _whole_number, "A whole number of days, 1 or more.")
    ORIGIN_URL = Setting[str | None](
        None,
        11,
        _optional_callable,
        "Give a dotted path to a callable(origin) -> URL or None, or remove the key.",
    )
    EMBEDDINGS = Setting[BackendConfig | Literal[False]](
        {"BACKEND": "agent_memory.embeddings.CombinedEmbeddings", "OPTIONS": {}},
        9,
        _embeddings,
        f"{_BACKEND_HINT[:-1]}, or False for word-stem search only.",
    )
    # The store of the site's memory (``agent_memory.get_memory()``), built with ``**OPTIONS``.
    STORE = Setting[BackendConfig](
        {"BACKEND": "agent_memory.stores.orm.DjangoStore", "OPTIONS": {}},
        12,
        _store,
        'Use {"BACKEND": "dotted.path.Store", "OPTIONS": {...}}, e.g. '
        '"agent_memory.stores.orm.DjangoStore" (the default).',
    )
    # The host's base template the memory screen renders inside (its ``content`` block).
    BASE_TEMPLATE = Setting[str | None](
        None,
        10,
        _base_template,
        "Name your site's base template (it needs a {% block content %}), or remove the key "
        "to use the screen's own page.",
    )

    @classmethod
    def keys(cls) -> Iterator[Setting[Any]]:
        """Every key, in the order above."""
        for value in vars(cls).values():
            if isinstance(value, Setting):
                yield value

    @property
    def user_settings(self) -> dict[str, Any]:
        """``settings.AGENT_MEMORY`` as given, or ``{}`` when it is missing or not a dict."""
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


DEFAULTS: dict[str, Any] = {key.name: key.default for key in MemorySettings.keys()}
"""Every key with its default (the README's settings table lists exactly these)."""

LIMIT_KEYS = ("MAX_NOTES", "MAX_TOTAL_CHARS", "MAX_BATCH", "MAX_BLOCK_CHARS", "SEARCH_LIMIT")

memory_settings = MemorySettings()
