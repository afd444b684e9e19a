"""Titles for the memory tool in a chat feed: "Working with memory" instead of ``manage_memory``,
and what one call did in a person's words: "Saved a note", «Сохранил заметку», "Searched memory".

Plain Python with no Django import, so a chat front end, a worker or a script can import it
without settings. The template filters ``tool_title`` and ``memory_action``
(``{% load agent_memory_labels %}``) use these titles in the active language.
"""

from __future__ import annotations

from collections.abc import Mapping

from .names import TOOL_NAME

#: The name of the memory tool (the same as ``LongTermMemory.tool_name``).
MEMORY_TOOL_NAME = TOOL_NAME

#: The language used when a language has no title of its own.
DEFAULT_LANGUAGE = "en"

#: The memory tool's title in a chat feed, by language code.
MEMORY_TOOL_TITLES: dict[str, str] = {
    "en": "Working with memory",
    "ru": "Работа с памятью",
}


#: What one call of the memory tool did, by language and action: the title for one note, then
#: the titles with ``{count}`` by plural form (English: other; Russian: one, few, many).
MEMORY_ACTION_TITLES: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        "create": ("Saved a note", "Saved {count} notes"),
        "update": ("Updated a note", "Updated {count} notes"),
        "delete": ("Deleted a note", "Deleted {count} notes"),
        "search": ("Searched memory",),
    },
    "ru": {
        "create": (
            "Сохранил заметку",
            "Сохранил {count} заметку",
            "Сохранил {count} заметки",
            "Сохранил {count} заметок",
        ),
        "update": (
            "Изменил заметку",
            "Изменил {count} заметку",
            "Изменил {count} заметки",
            "Изменил {count} заметок",
        ),
        "delete": (
            "Удалил заметку",
            "Удалил {count} заметку",
            "Удалил {count} заметки",
            "Удалил {count} заметок",
        ),
        "search": ("Поискал в памяти",),
    },
}

#: The same, when the call was refused (nothing changed in memory).
MEMORY_ACTION_FAILED_TITLES: dict[str, dict[str, str]] = {
    "en": {
        "create": "Could not save the note",
        "update": "Could not update the note",
        "delete": "Could not delete the note",
        "search": "Could not search memory",
    },
    "ru": {
        "create": "Не удалось сохранить заметку",
        "update": "Не удалось изменить заметку",
        "delete": "Не удалось удалить заметку",
        "search": "Не удалось поискать в памяти",
    },
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


def _plural_index(language: str, count: int) -> int:
    """Which of a title's forms with ``{count}`` fits ``count`` (CLDR rules: Russian one, few,
    many; English has one such form)."""
    if language != "ru":
        return 0
    if count % 10 == 1 and count % 100 != 11:
        return 0
    if 2 <= count % 10 <= 4 and not 12 <= count % 100 <= 14:
        return 1
    return 2


def memory_action_title(
    action: str | None,
    language: str | None = DEFAULT_LANGUAGE,
    count: int = 1,
    *,
    failed: bool = False,
) -> str:
    """What a call of the memory tool did, for a person: ``"Saved a note"``, ``"Saved 2 notes"``,
    «Сохранил 5 заметок», ``"Could not save the note"``.

    An action the tool does not have gets the tool's own title ("Working with memory").
    """
    code = base_language(language)
    if code not in MEMORY_ACTION_TITLES:
        code = DEFAULT_LANGUAGE
    if failed and action in MEMORY_ACTION_FAILED_TITLES[code]:
        return MEMORY_ACTION_FAILED_TITLES[code][action]
    forms = MEMORY_ACTION_TITLES[code].get(action or "")
    if forms is None:
        return memory_tool_title(code)
    count = max(int(count), 1)
    if count == 1 or len(forms) == 1:
        return forms[0]
    plural = forms[1:]
    return plural[min(_plural_index(code, count), len(plural) - 1)].format(count=count)


__all__ = [
    "MEMORY_ACTION_FAILED_TITLES",
    "MEMORY_ACTION_TITLES",
    "MEMORY_TOOL_NAME",
    "MEMORY_TOOL_TITLES",
    "base_language",
    "memory_action_title",
    "memory_tool_title",
    "tool_title",
    "with_memory_tool_titles",
]
