"""Deletion reaches the example's transcripts: receivers of ``agent_memory.signals``.

The signals carry ids, never text. The chat's own stored copies name the notes by id (the tool
results ``{"note": {"id", "content", …}}``, the memory blocks ``<note key="memory:<id>" …>``),
so the receiver first learns from them which texts the deleted notes had, then removes those
texts from every stored message of the person (tool results, tool calls, memory text, answers)
and from the chats' summaries, leaving ``[deleted note memory:<id>]`` in their place.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

from django.db import transaction

#: What stands in for a deleted note's text.
MARKER = "[deleted note memory:{id}]"

_LINE = re.compile(r'<note key="memory:(?P<id>\d+)"[^>]*>(?P<text>.*?)</note>')


def _texts_in_results(value: Any, ids: set[int], found: dict[int, set[str]]) -> None:
    """Collect ``content`` of the notes ``ids`` anywhere in a tool result (or call)."""
    if isinstance(value, dict):
        note_id = value.get("id")
        if isinstance(note_id, int) and note_id in ids and isinstance(value.get("content"), str):
            found.setdefault(note_id, set()).add(value["content"])
        for item in value.values():
            _texts_in_results(item, ids, found)
    elif isinstance(value, list):
        for item in value:
            _texts_in_results(item, ids, found)


def _texts_of(messages: Any, ids: set[int]) -> dict[int, set[str]]:
    """The texts the notes ``ids`` had in the person's stored messages, by note id."""
    found: dict[int, set[str]] = {}
    for message in messages:
        if message.role == "tool" and message.content:
            try:
                _texts_in_results(json.loads(message.content), ids, found)
            except ValueError:
                pass
        for match in _LINE.finditer(message.memory_text or ""):
            if int(match["id"]) in ids:
                text = html.unescape(match["text"])
                found.setdefault(int(match["id"]), set()).update({text, match["text"]})
    # The model's create calls carry the text without an id: their results gave it above.
    return found


def _scrub(text: str, texts: dict[int, set[str]]) -> str:
    for note_id, variants in texts.items():
        for variant in sorted(variants, key=len, reverse=True):
            if variant:
                text = text.replace(variant, MARKER.format(id=note_id))
                # As a JSON string inside stored JSON text (quotes and non-ASCII escaped).
                for encoded in (
                    json.dumps(variant)[1:-1],
                    json.dumps(variant, ensure_ascii=False)[1:-1],
                ):
                    if encoded != variant:
                        text = text.replace(encoded, MARKER.format(id=note_id))
    return text


def _scrub_json(value: Any, texts: dict[int, set[str]]) -> Any:
    if isinstance(value, str):
        return _scrub(value, texts)
    if isinstance(value, dict):
        return {key: _scrub_json(item, texts) for key, item in value.items()}
    if isinstance(value, list):
        return [_scrub_json(item, texts) for item in value]
    return value


def forget_notes(user_id: Any, note_ids: list[int]) -> int:
    """Remove the texts of the notes ``note_ids`` from the person's stored chats; return how
    many messages changed."""
    from .models import Chat, Message

    ids = set(note_ids)
    messages = list(Message.objects.filter(chat__user_id=user_id).order_by("id"))
    texts = _texts_of(messages, ids)
    if not texts:
        return 0
    changed = 0
    with transaction.atomic():
        for message in messages:
            before = (message.content, message.memory_text, message.tool_calls)
            message.content = _scrub(message.content, texts)
            message.memory_text = _scrub(message.memory_text, texts)
            message.tool_calls = _scrub_json(message.tool_calls, texts)
            if (message.content, message.memory_text, message.tool_calls) != before:
                message.save(update_fields=["content", "memory_text", "tool_calls"])
                changed += 1
        for chat in Chat.objects.filter(user_id=user_id).exclude(summary=""):
            summary = _scrub(chat.summary, texts)
            if summary != chat.summary:
                chat.summary = summary
                chat.save(update_fields=["summary"])
    return changed


def on_note_deleted(
    sender: Any, user_id: Any, note_ids: list[int], reason: str, **kwargs: Any
) -> None:
    """``note_deleted``: any delete, expiry, merge or erase."""
    forget_notes(user_id, note_ids)
