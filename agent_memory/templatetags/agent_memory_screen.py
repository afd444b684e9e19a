"""``{% load agent_memory_screen %}``: ``{{ note|origin_url }}`` is the address of the place
where the note was saved (e.g. its chat), from ``AGENT_MEMORY["ORIGIN_URL"]``, or ``""``;
``{{ histories|history_of:note.id }}`` the note's earlier versions the screen was given."""

from __future__ import annotations

import logging

from django import template
from django.utils.module_loading import import_string

from ..conf import memory_settings

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
        url = import_string(path)(origin)
    except Exception:
        # A broken host callable must not break the memory screen (E010 reports bad paths).
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
