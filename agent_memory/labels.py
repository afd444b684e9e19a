"""Titles for the memory tool in a chat feed: "Working with memory" instead of ``manage_memory``,
and what one call did in a person's words: "Saved a note", «Сохранил заметку», "Searched memory".

Plain Python with no Django import, so a chat front end, a worker or a script can import it
without settings. The titles are English messages marked for the package's catalogue (Russian
ships); a title is translated when it is asked for, in the language given, from the compiled
catalogue beside this module (read with the standard library's :mod:`gettext`). The template
filters ``tool_title`` and ``memory_action`` (``{% load agent_memory_labels %}``) give them in the
active language.
"""

from __future__ import annotations

import gettext as catalogues
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path

from .names import TOOL_NAME

#: The name of the memory tool (the same as ``LongTermMemory.tool_name``).
MEMORY_TOOL_NAME = TOOL_NAME

#: The language used when a language has no title of its own.
DEFAULT_LANGUAGE = "en"

#: Where the package's compiled catalogues are (``<language>/LC_MESSAGES/django.mo``).
LOCALE_DIR = Path(__file__).resolve().parent / "locale"


def gettext_noop(message: str) -> str:
    """Mark ``message`` for the catalogue without translating it, as Django's ``gettext_noop``
    does (``makemessages`` collects both): it is translated when shown."""
    return message


#: The memory tool's title in a chat feed (English; :func:`memory_tool_title` translates it).
MEMORY_TOOL_TITLE = gettext_noop("Working with memory")

#: What one call of the memory tool did to one note, by action (English). Titles with a count
#: ("Saved 3 notes") have plural forms in the catalogue: see :func:`memory_action_title`.
MEMORY_ACTION_TITLES: dict[str, str] = {
    "create": gettext_noop("Saved a note"),
    "update": gettext_noop("Updated a note"),
    "delete": gettext_noop("Deleted a note"),
    "search": gettext_noop("Searched memory"),
}

#: The same, when the call was refused (nothing changed in memory).
MEMORY_ACTION_FAILED_TITLES: dict[str, str] = {
    "create": gettext_noop("Could not save the note"),
    "update": gettext_noop("Could not update the note"),
    "delete": gettext_noop("Could not delete the note"),
    "search": gettext_noop("Could not search memory"),
}


@lru_cache(maxsize=16)
def catalogue(language: str | None) -> catalogues.NullTranslations:
    """The package's translations into ``language`` (``"ru"``, ``"ru-RU"``…); a language
    without a catalogue gets the English titles."""
    return catalogues.translation(
        "django", localedir=LOCALE_DIR, languages=[base_language(language)], fallback=True
    )


def base_language(language: str | None) -> str:
    """``"ru-RU"``, ``"ru_RU"`` or ``"RU"`` → ``"ru"``; ``None`` or ``""`` → the default."""
    if not language:
        return DEFAULT_LANGUAGE
    return language.replace("_", "-").split("-", 1)[0].strip().lower() or DEFAULT_LANGUAGE


def memory_tool_title(language: str | None = DEFAULT_LANGUAGE) -> str:
    """The memory tool's title in ``language`` (English when that language has none)."""
    return catalogue(language).gettext(MEMORY_TOOL_TITLE)


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


def _counted_title(translations: catalogues.NullTranslations, action: str, count: int) -> str:
    """The title of a call that did ``action`` to ``count`` notes, in the catalogue's plural
    forms (Russian: one, few, many)."""
    ngettext = translations.ngettext
    if action == "create":
        title = ngettext("Saved %(count)s note", "Saved %(count)s notes", count)
    elif action == "update":
        title = ngettext("Updated %(count)s note", "Updated %(count)s notes", count)
    else:
        title = ngettext("Deleted %(count)s note", "Deleted %(count)s notes", count)
    return title % {"count": count}


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
    translations = catalogue(language)
    if failed and action in MEMORY_ACTION_FAILED_TITLES:
        return translations.gettext(MEMORY_ACTION_FAILED_TITLES[action])
    if action not in MEMORY_ACTION_TITLES:
        return translations.gettext(MEMORY_TOOL_TITLE)
    count = max(int(count), 1)
    if count == 1 or action == "search":
        return translations.gettext(MEMORY_ACTION_TITLES[action])
    return _counted_title(translations, action, count)


__all__ = [
    "LOCALE_DIR",
    "MEMORY_ACTION_FAILED_TITLES",
    "MEMORY_ACTION_TITLES",
    "MEMORY_TOOL_NAME",
    "MEMORY_TOOL_TITLE",
    "base_language",
    "catalogue",
    "memory_action_title",
    "memory_tool_title",
    "tool_title",
    "with_memory_tool_titles",
]
