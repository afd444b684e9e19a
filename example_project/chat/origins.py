"""Where a note was saved: each chat names itself ``chat:<id>`` to memory, and the memory
screen links such a note back to its chat (``AGENT_MEMORY["ORIGIN_URL"]``)."""

from __future__ import annotations

from typing import Any

from django.urls import reverse

PREFIX = "chat:"


def origin_of(chat: Any) -> str:
    """The origin memory stores on the notes the agent saves in ``chat``."""
    return f"{PREFIX}{chat.pk}"


def chat_url(origin: str) -> str | None:
    """``ORIGIN_URL``: the address of the chat an origin names, or ``None`` for any other."""
    number = origin.removeprefix(PREFIX)
    if not origin.startswith(PREFIX) or not (number.isascii() and number.isdigit()):
        return None
    return reverse("chat:detail", args=[int(number)])


def forget_chat(sender: Any, instance: Any, **kwargs: Any) -> None:
    """``post_delete`` of a chat: its notes stay, but no longer point at the deleted chat."""
    from agent_memory import get_memory

    get_memory().clear_origin(instance.user_id, origin_of(instance))
