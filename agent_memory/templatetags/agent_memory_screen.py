"""``{% load agent_memory_screen %}``: ``{{ note|origin_url }}`` is the address of the place
where the note was saved (e.g. its chat), from ``AGENT_MEMORY["ORIGIN_URL"]``, or ``""``;
``{{ histories|history_of:note.id }}`` the note's earlier versions the screen was given;
``{% messages_at "note" note.id as here %}`` the messages about that element (``note-12``);
``{{ mapping|lookup:key }}`` one value of a dict."""

from __future__ import annotations

import logging
from typing import Any

from django import template

from ..conf import import_setting, memory_settings

register = template.Library()
logger = logging.getLogger("agent_memory")


@register.filter
def origin_url(note: object) -> str:
    """Where ``note`` was saved, as a link target; ``""`` when unknown or not linkable."""
    origin = getattr(note, "origin", "") or ""
    path = memory_settings.ORIGIN_URL
    if not origin or not path:
        return ""
    try:
        url = import_setting("ORIGIN_URL", path)(origin)
    except Exception:
        # A broken host callable must not break the memory screen (E011 reports bad paths).
        logger.exception("AGENT_MEMORY['ORIGIN_URL'] failed for a note's origin.")
        return ""
    return url if isinstance(url, str) else ""


@register.filter
def history_of(histories: object, note_id: object) -> list[object]:
    """The earlier versions kept for the note ``note_id`` in ``histories`` (id → versions)."""
    if not isinstance(histories, dict):
        return []
    found = histories.get(note_id)
    return list(found) if found else []


@register.simple_tag(takes_context=True)
def messages_at(context: Any, *parts: object) -> list[Any]:
    """The messages placed at the element ``parts`` name, joined with "-" (``"note", 12`` is
    ``note-12``; ``""`` the top of the screen), from the view's ``placed_messages``."""
    placed = context.get("placed_messages") or {}
    return list(placed.get("-".join(str(part) for part in parts if part != ""), []))


@register.filter
def lookup(mapping: object, key: object) -> object:
    """``{{ merged_runs|lookup:note.id }}``: the value for ``key``, or ``""``."""
    return mapping.get(key, "") if isinstance(mapping, dict) else ""
