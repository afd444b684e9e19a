"""The ``manage_memory`` tool: its JSON Schema, its definitions per provider, and its arguments.

:func:`parse_call` reads one call of the model into a :class:`ToolCall` or raises
:class:`~agent_memory.errors.InvalidNote` saying the shape expected; the front door
(:meth:`agent_memory.LongTermMemory.call_tool`) runs it and answers with a JSON-serialisable
dict: the result, or ``{"error": {"kind", "message"}}``. Every rule on the notes themselves lives
in :mod:`agent_memory.rules`.

The answer shapes are public constants (:data:`NOTE_SCHEMA`, :data:`ANSWER_SCHEMAS`,
:data:`ERROR_SCHEMA`) so the HTTP API and the docs describe exactly what the tool returns.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext

from .conf import Limits, memory_settings
from .errors import InvalidNote, ToolNameConflictError
from .kinds import NoteSource
from .names import TOOL_NAME
from .rules import MAX_CATEGORIES, MAX_CATEGORY_CHARS, MAX_CONTENT_CHARS
from .search import MAX_QUERY_CHARS

ACTIONS = ("create", "update", "delete", "search")
FORMATS = ("openai", "anthropic", "json")


#: What each action needs, as the model should send it (quoted in error messages).
EXAMPLES = {
    "create": (
        '{"action": "create", "notes": [{"categories": ["Preferences", "Language"], '
        '"content": "Prefers answers in English."}]}'
    ),
    "update": (
        '{"action": "update", "id": "memory:12", "version": 3, "categories": ["Preferences"], '
        '"content": "Prefers short answers."}'
    ),
    "delete": '{"action": "delete", "id": "memory:12", "version": 3}',
    "search": '{"action": "search", "query": "coffee"}',
}

_NEEDS = {
    "create": ("notes",),
    "update": ("id", "version", "categories", "content"),
    "delete": ("id", "version"),
    "search": ("query",),
}

_KEY_PATTERN = "^memory:[1-9][0-9]*$"

# --- the answers ----------------------------------------------------------------------------

#: One note as the tool (and the HTTP API) answers it.
NOTE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "id": {"type": "integer", "minimum": 1},
        "version": {"type": "integer", "minimum": 1},
        "categories": {
            "type": "array",
            "items": {"type": "string", "minLength": 1, "maxLength": MAX_CATEGORY_CHARS},
            "minItems": 1,
            "maxItems": MAX_CATEGORIES,
        },
        "content": {"type": "string", "minLength": 1, "maxLength": MAX_CONTENT_CHARS},
        "updated_at": {"type": "string", "format": "date-time"},
        "source": {"type": "string", "enum": [source.value for source in NoteSource]},
        "pinned": {"type": "boolean"},
        "created_by": {"type": "string", "enum": [source.value for source in NoteSource]},
        "valid_until": {"type": ["string", "null"], "format": "date-time"},
    },
    "required": ["id", "version", "categories", "content", "updated_at", "source", "pinned"],
    "additionalProperties": False,
}

#: ``{"error": {"kind", "message"}}``: every failure of the tool.
ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "error": {
            "type": "object",
            "properties": {
                "kind": {
                    "enum": [
                        *("invalid", "duplicate", "limit_reached", "not_found", "stale_version"),
                        *("read_only", "disabled"),
                    ]
                },
                "message": {"type": "string", "minLength": 1},
            },
            "required": ["kind", "message"],
            "additionalProperties": False,
        }
    },
    "required": ["error"],
    "additionalProperties": False,
}

#: The answer of each action when it succeeds.
ANSWER_SCHEMAS: dict[str, dict[str, Any]] = {
    "create": {
        "type": "object",
        "properties": {"notes": {"type": "array", "items": NOTE_SCHEMA, "minItems": 1}},
        "required": ["notes"],
        "additionalProperties": False,
    },
    "update": {
        "type": "object",
        "properties": {"note": NOTE_SCHEMA},
        "required": ["note"],
        "additionalProperties": False,
    },
    "delete": {
        "type": "object",
        "properties": {"deleted": {"type": "integer", "minimum": 1}},
        "required": ["deleted"],
        "additionalProperties": False,
    },
    "search": {
        "type": "object",
        "properties": {
            "notes": {"type": "array", "items": NOTE_SCHEMA},
            "total": {"type": "integer", "minimum": 0},
        },
        "required": ["notes", "total"],
        "additionalProperties": False,
    },
}

#: Any answer of the tool: one of the action answers or an error.
ANSWER_SCHEMA: dict[str, Any] = {"oneOf": [*ANSWER_SCHEMAS.values(), ERROR_SCHEMA]}


# --- the definition -------------------------------------------------------------------------


def description(limits: Limits) -> str:
    """What the tool does, for the model."""
    return (
        "Long-term memory about the person you are talking to: short notes that last across "
        'chats. Actions: "create" saves 1 to '
        f"{limits.max_batch} new notes (notes: [{{categories, content}}], all or none); "
        '"update" replaces one note\'s categories and content (id, version, categories, '
        'content); "delete" removes one note (id, version); "search" finds saved notes by '
        "words or meaning (query), or one note by its key. Take id and version from the "
        "<agent_memory> "
        'block or from search results; an id is the note\'s key, e.g. "memory:12". Notes marked '
        'pinned="true" are the person\'s own rules: read them, never update or delete them. '
        "A fact that holds only for a while gets valid_until (a date, YYYY-MM-DD). "
        "Never save passwords, keys or card numbers. Failures come back as "
        '{"error": {"kind", "message"}}; the message says what to do next.'
    )


def input_schema(limits: Limits | None = None) -> dict[str, Any]:
    """The JSON Schema of the tool's arguments, with the limits in force.

    One flat object (both OpenAI and Anthropic require ``type: object`` at the top and reject
    ``oneOf`` there); each field says which actions need it.
    """
    limits = limits or memory_settings.limits
    categories: dict[str, Any] = {
        "type": "array",
        "description": (
            f"1 to {MAX_CATEGORIES} short category names, most general first, e.g. "
            '["Preferences", "Language"]. No "/" inside a name.'
        ),
        "items": {
            "type": "string",
            "minLength": 1,
            "maxLength": MAX_CATEGORY_CHARS,
            "pattern": "^[^/]*$",
        },
        "minItems": 1,
        "maxItems": MAX_CATEGORIES,
    }
    content_help = (
        "one self-contained fact, preference or rule about the person, "
        f"1 to {MAX_CONTENT_CHARS} characters."
    )
    content: dict[str, Any] = {
        "type": "string",
        "description": f"The note: {content_help}",
        "minLength": 1,
        "maxLength": MAX_CONTENT_CHARS,
    }
    valid_until: dict[str, Any] = {
        "type": ["string", "null"],
        "maxLength": 40,
        "description": (
            'Optional: when the fact stops holding, for time-bound facts ("until Friday", '
            '"this week"): a date YYYY-MM-DD (valid through that day) or a date-time with '
            "its offset, e.g. 2026-12-05T18:00:00+01:00. Leave it out for lasting facts."
        ),
    }
    return {
        "type": "object",
        "properties": {
            "action": {
                "type": "string",
                "enum": list(ACTIONS),
                "description": "What to do: create, update, delete or search.",
            },
            "notes": {
                "type": "array",
                "description": f"create only: the new notes, 1 to {limits.max_batch}.",
                "items": {
                    "type": "object",
                    "properties": {
                        "categories": categories,
                        "content": content,
                        "valid_until": valid_until,
                    },
                    "required": ["categories", "content"],
                    "additionalProperties": False,
                },
                "minItems": 1,
                "maxItems": limits.max_batch,
            },
            "id": {
                "description": (
                    'update and delete: the note\'s key, e.g. "memory:12" (or just 12).'
                ),
                "anyOf": [
                    {"type": "string", "pattern": _KEY_PATTERN},
                    {"type": "integer", "minimum": 1},
                ],
            },
            "version": {
                "type": "integer",
                "minimum": 1,
                "description": (
                    "update and delete: the note's current version, from the memory block or "
                    "from search results."
                ),
            },
            "categories": {
                **categories,
                "description": "update only: " + categories["description"],
            },
            "content": {
                **content,
                "description": f"update only: the note's new text, {content_help}",
            },
            "valid_until": {
                **valid_until,
                "description": (
                    "update only: " + valid_until["description"] + " Left out, the note keeps "
                    "its end; null removes it."
                ),
            },
            "query": {
                "type": "string",
                "minLength": 1,
                "maxLength": MAX_QUERY_CHARS,
                "description": 'search only: a few words to look for, or a key like "memory:12".',
            },
        },
        "required": ["action"],
        "additionalProperties": False,
    }


def tool_definition(format: str = "openai", limits: Limits | None = None) -> dict[str, Any]:
    """The ``manage_memory`` tool for ``"openai"``, ``"anthropic"`` or ``"json"``.

    ``"openai"``: a function tool (``{"type": "function", "function": {...}}``);
    ``"anthropic"``: ``{"name", "description", "input_schema"}``; ``"json"``: the bare JSON
    Schema of the arguments (Draft 2020-12), titled with the tool's name.
    """
    limits = limits or memory_settings.limits
    schema = input_schema(limits)
    text = description(limits)
    if format == "openai":
        return {
            "type": "function",
            "function": {"name": TOOL_NAME, "description": text, "parameters": schema},
        }
    if format == "anthropic":
        return {"name": TOOL_NAME, "description": text, "input_schema": schema}
    if format == "json":
        return {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": TOOL_NAME,
            "description": text,
            **schema,
        }
    raise ValueError(f"Unknown tool format {format!r}; use one of: {', '.join(FORMATS)}.")


def tool_name_of(tool: Any) -> str | None:
    """The name of an app tool in any of the three formats, if it has one."""
    if not isinstance(tool, Mapping):
        return None
    function = tool.get("function")
    names = [function.get("name")] if isinstance(function, Mapping) else []
    names += [tool.get("name"), tool.get("title")]
    return next((name for name in names if isinstance(name, str)), None)


def merge_tools(
    app_tools: Sequence[Any], definition: Mapping[str, Any], format: str = "openai"
) -> list[Any]:
    """``app_tools`` followed by the memory tool; an app tool named ``manage_memory`` clashes."""
    tools = list(app_tools or ())
    for tool in tools:
        if tool_name_of(tool) == TOOL_NAME:
            raise ToolNameConflictError(
                f'An app tool is already named "{TOOL_NAME}", the name of the memory tool '
                f"({format} format). Rename the app tool."
            )
    return [*tools, dict(definition)]


# --- the arguments --------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolCall:
    """One call of the tool, read from the model's arguments: the action and the fields it
    uses, as sent (the front door's operations check their values with the rules)."""

    action: str
    notes: Sequence[Any] = ()
    id: Any = None
    version: Any = None
    categories: Any = None
    content: Any = None
    query: Any = None
    #: Whether an update sent ``valid_until``: left out, the note keeps its end; ``null``
    #: removes it.
    sets_valid_until: bool = False
    valid_until: Any = None


def parse_call(arguments: Any, limits: Limits | None = None) -> ToolCall:
    """The model's arguments (a dict, or JSON text or bytes) as a :class:`ToolCall`.

    Raises :class:`~agent_memory.errors.InvalidNote` (kind ``invalid``) whose message shows the
    shape expected: not a JSON object, an unknown action, a field the action needs left out,
    ``notes`` not a list, or ``pinned`` sent (only the person pins or unpins). Fields the
    action does not use are ignored.
    """
    parsed = _parse(arguments)
    if isinstance(parsed, str):
        raise InvalidNote(parsed)
    action = parsed.get("action")
    if not isinstance(action, str) or action not in ACTIONS:
        raise InvalidNote(
            gettext(
                'action must be one of "create", "update", "delete", "search". For example: '
                "{example}"
            ).format(example=EXAMPLES["search"])
        )
    if _sets_pinned(parsed):
        raise InvalidNote(
            gettext(
                "pinned cannot be sent: only the person pins or unpins a note, on their memory "
                "screen. Leave pinned out. For example: {example}"
            ).format(example=EXAMPLES[action])
        )
    missing = [name for name in _NEEDS[action] if parsed.get(name) is None]
    if missing:
        raise InvalidNote(
            gettext("{action} needs {fields}; missing: {missing}. For example: {example}").format(
                action=action,
                fields=", ".join(_NEEDS[action]),
                missing=", ".join(missing),
                example=EXAMPLES[action],
            )
        )
    if action == "create" and not isinstance(parsed["notes"], (list, tuple)):
        raise InvalidNote(
            gettext(
                "notes must be a list of 1 to {count} objects "
                '{{"categories": [...], "content": "..."}}. For example: {example}'
            ).format(count=(limits or memory_settings.limits).max_batch, example=EXAMPLES["create"])
        )
    used = {name: parsed[name] for name in _NEEDS[action]}
    if action == "update" and "valid_until" in parsed:
        used.update(sets_valid_until=True, valid_until=parsed["valid_until"])
    return ToolCall(action=action, **used)


def _sets_pinned(arguments: Mapping[str, Any]) -> bool:
    """Whether the call sends ``pinned``, at the top or in a note of ``notes``."""
    if "pinned" in arguments:
        return True
    notes = arguments.get("notes")
    return isinstance(notes, (list, tuple)) and any(
        isinstance(item, Mapping) and "pinned" in item for item in notes
    )


def _parse(arguments: Any) -> Mapping[str, Any] | str:
    """The arguments as a mapping, or the message saying why they are not one."""
    shape = gettext(
        'The arguments must be a JSON object with an "action" and that action\'s fields, '
        "e.g. {example}"
    ).format(example=EXAMPLES["search"])
    if isinstance(arguments, (bytes, bytearray)):
        try:
            arguments = arguments.decode("utf-8")
        except UnicodeDecodeError:
            return gettext("The arguments are not UTF-8 text. {shape}").format(shape=shape)
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except (ValueError, RecursionError):
            return gettext("The arguments are not valid JSON. {shape}").format(shape=shape)
    if not isinstance(arguments, Mapping):
        return shape
    return arguments


__all__ = [
    "ACTIONS",
    "ANSWER_SCHEMA",
    "ANSWER_SCHEMAS",
    "ERROR_SCHEMA",
    "EXAMPLES",
    "FORMATS",
    "MAX_QUERY_CHARS",
    "NOTE_SCHEMA",
    "TOOL_NAME",
    "ToolCall",
    "description",
    "input_schema",
    "merge_tools",
    "parse_call",
    "tool_definition",
    "tool_name_of",
]
