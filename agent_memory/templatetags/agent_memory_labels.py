"""``{% load agent_memory_labels %}``: ``{{ call.name|tool_title }}`` shows the memory tool's
title ("Working with memory" / «Работа с памятью») in the active language."""

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
