"""Titles for the memory tool in a chat feed: "Working with memory" instead of ``manage_memory``.

Plain Python with no Django import, so a chat front end, a worker or a script can import it
without settings. The template filter ``tool_title`` (``{% load agent_memory_labels %}``) uses
these titles in the active language.
"""

from __future__ import annotations

from collections.abc import Mapping

#: The name of the memory tool (the same as ``LongTermMemory.tool_name``).
MEMORY_TOOL_NAME = "manage_memory"

#: The language used when a language has no title of its own.
DEFAULT_LANGUAGE = "en"

#: The memory tool's title in a chat feed, by language code.
MEMORY_TOOL_TITLES: dict[str, str] = {
    "en": "Working with memory",
    "ru": "Работа с памятью",
}


def base_language(language: str | None) -> str:
    """``"ru-RU"``, ``"ru_RU"`` or ``"RU"`` → ``"ru"``; ``None`` or ``""`` → the default."""
    if not language:
        return DEFAULT_LANGUAGE
    return language.replace("_", "-").split("-", 1)[0].strip().lower() or DEFAULT_LANGUAGE


def memory_tool_title(language: str | None = DEFAULT_LANGUAGE) -> str:
    """The memory tool's title in ``language`` (English when that language has none)."""
    return MEMORY_TOOL_TITLES.get(base_language(language), MEMORY_TOOL_TITLES[DEFAULT_LANGUAGE])


def tool_title(name: str, language: str | None = DEFAULT_LANGUAGE) -> str:
    """The title of the tool called ``name``: the memory tool's title, other names unchanged."""
    if name == MEMORY_TOOL_NAME:
        return memory_tool_title(language)
    return name


def with_memory_tool_titles(
    labels: Mapping[str, str] | None = None, language: str | None = DEFAULT_LANGUAGE
) -> dict[str, str]:
    """A copy of a host's ``{tool name: title}`` labels with the memory tool's title added.

    A title the host already gives ``manage_memory`` is kept: the host's choice wins.
    """
    result = dict(labels or {})
    result.setdefault(MEMORY_TOOL_NAME, memory_tool_title(language))
    return result


__all__ = [
    "MEMORY_TOOL_NAME",
    "MEMORY_TOOL_TITLES",
    "base_language",
    "memory_tool_title",
    "tool_title",
    "with_memory_tool_titles",
]
