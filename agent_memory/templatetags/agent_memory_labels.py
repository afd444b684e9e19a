"""``{% load agent_memory_labels %}``: ``{{ call.name|tool_title }}`` shows the memory tool's
title ("Working with memory" / «Работа с памятью») and ``{{ action|memory_action }}`` what one
call did ("Saved a note" / «Сохранил заметку»), in the active language."""

from __future__ import annotations

from django import template
from django.utils.translation import get_language

from .. import labels

register = template.Library()


@register.filter
def tool_title(name: object, language: str | None = None) -> object:
    """The title of a tool call in a chat feed; other tools' names pass through unchanged.

    ``{{ name|tool_title }}`` uses the active language, ``{{ name|tool_title:"ru" }}`` a given one.
    """
    if not isinstance(name, str):
        return name
    return labels.tool_title(name, language or get_language())


@register.filter
def memory_action(action: object, count: object = 1) -> str:
    """What a memory tool call did: ``{{ "create"|memory_action }}`` → "Saved a note",
    ``{{ "create"|memory_action:3 }}`` → "Saved 3 notes" (active language)."""
    try:
        number = int(count)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        number = 1
    return labels.memory_action_title(
        action if isinstance(action, str) else None, get_language(), number
    )
