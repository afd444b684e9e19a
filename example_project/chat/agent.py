"""The chat turn, following the integration recipe of ``agent_memory``.

::

    memory = get_memory()
    turn = memory.begin_turn(user, state_of_last_visible_answer, reason=..., group=chat.is_group)
    system = APP_PROMPT + memory.instructions
    tools = memory.tools(APP_TOOLS, "openai")
    ... the model answers or calls tools; manage_memory goes to memory.call_tool(user, args) ...
    answer = memory.strip_service_blocks(reply.content)
    store the answer with turn.state as its service part
    memory.after_turn(user, model=alias)
"""

from __future__ import annotations

import datetime
import json
import logging
from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.module_loading import import_string
from django.utils.translation import gettext as _

from agent_memory import LongTermMemory, get_memory

from .llm import ModelError, Reply
from .models import Chat, Message
from .origins import origin_of

logger = logging.getLogger(__name__)

APP_PROMPT = (
    "You are a helpful assistant in a Django example chat. Answer briefly and in the "
    "language the person writes in."
)
#: How many rounds of tool calls one turn may take before we give up.
MAX_TOOL_ROUNDS = 8

FIRST_MESSAGE_EDITED = "first_message_edited"
FIRST_ANSWER_REGENERATED = "first_answer_regenerated"
COMPACTED = "compacted"


def today(_arguments: Mapping[str, Any]) -> dict[str, Any]:
    """An app tool of the example, to show app tools living beside the memory tool."""
    return {"date": timezone.localdate().isoformat()}


#: The app's own tools (chat-completions format) and what runs them.
APP_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "today",
            "description": "Today's date (ISO 8601).",
            "parameters": {"type": "object", "properties": {}, "additionalProperties": False},
        },
    }
]
APP_TOOL_FUNCTIONS = {"today": today}


def model_alias() -> str:
    """The alias in ``AGENT_MEMORY["MODELS"]`` that runs the chat (and then the optimizer)."""
    return getattr(settings, "CHAT_MODEL", "default")


def chat_model(alias: str | None = None) -> Any:
    """The model backend behind ``alias``: ``chat(messages, tools)``, ``summarize(…)``."""
    alias = alias or model_alias()
    models = (getattr(settings, "AGENT_MEMORY", None) or {}).get("MODELS") or {}
    config = models.get(alias)
    if not config:
        raise ModelError(
            _('No model "%(alias)s" in AGENT_MEMORY["MODELS"]: check the settings.')
            % {"alias": alias}
        )
    backend = import_string(config["BACKEND"])
    return backend(**(config.get("OPTIONS") or {}))


def last_visible_state(chat: Chat) -> dict[str, Any] | None:
    """The memory state stored with the last answer the model will still see."""
    answer = (
        chat.messages.filter(role=Message.Role.ASSISTANT, failed=False, state__isnull=False)
        .order_by("-id")
        .first()
    )
    return answer.state if answer else None


def model_messages(chat: Chat) -> list[dict[str, Any]]:
    """The conversation as the model sees it (failed turns left out)."""
    memory = get_memory()
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": APP_PROMPT + "\n\n" + memory.instructions}
    ]
    if chat.summary:
        messages.append(
            {"role": "system", "content": "Summary of the earlier conversation:\n" + chat.summary}
        )
    for message in chat.messages.filter(failed=False).order_by("id"):
        messages.append(as_model_message(message))
    return messages


def as_model_message(message: Message) -> dict[str, Any]:
    if message.role == Message.Role.USER:
        content = message.content
        if message.memory_text:
            content = message.memory_text + "\n\n" + content
        return {"role": "user", "content": content}
    if message.role == Message.Role.TOOL:
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
    if message.tool_calls:
        return {
            "role": "assistant",
            "content": message.content or None,
            "tool_calls": [
                {
                    "id": call["id"],
                    "type": "function",
                    "function": {"name": call["name"], "arguments": call["arguments"]},
                }
                for call in message.tool_calls
            ],
        }
    return {"role": "assistant", "content": message.content}


def next_turn_number(chat: Chat) -> int:
    last = chat.messages.order_by("-turn").values_list("turn", flat=True).first()
    return (last or 0) + 1


def run_turn(chat: Chat, text: str, *, reason: str | None = None) -> Message:
    """Ask the agent ``text`` in ``chat``; return the answer (or the error) as a message."""
    user = chat.user
    memory = get_memory()
    alias = model_alias()
    temporary = chat.is_temporary
    if temporary:
        state, reason = None, None  # nothing is read: there is no memory state to carry
    elif reason in (FIRST_MESSAGE_EDITED, FIRST_ANSWER_REGENERATED):
        state = None  # no earlier answer is left for the model to see
    else:
        state = last_visible_state(chat)
        reason = reason or chat.next_reason or None
    turn = memory.begin_turn(user, state, reason=reason, group=chat.is_group, temporary=temporary)

    history = model_messages(chat)
    number = next_turn_number(chat)
    question = Message.objects.create(
        chat=chat,
        turn=number,
        role=Message.Role.USER,
        content=text,
        memory_text=turn.text,
        memory_reason=reason or "",
        group=chat.is_group,
    )
    messages = [*history, as_model_message(question)]
    if not chat.title:
        chat.title = chat_title(text)

    try:
        model = chat_model(alias)
        # Without the memory tool while the person has memory off, or in a temporary chat.
        tools = memory.tools(APP_TOOLS, "openai", user=user, temporary=temporary)
        answer = tool_loop(chat, number, model, messages, tools, memory)
    except Exception as error:  # the person sees what went wrong, never a server error page
        if isinstance(error, ModelError):
            shown = str(error)
        else:
            logger.exception("The turn failed in chat %s", chat.pk)
            shown = _("The agent failed unexpectedly (%(error)s). Try again.") % {
                "error": type(error).__name__
            }
        chat.messages.filter(turn=number).update(failed=True)
        chat.save()
        return Message.objects.create(
            chat=chat,
            turn=number,
            role=Message.Role.ASSISTANT,
            content=shown,
            failed=True,
            model_alias=alias,
        )

    answer_message = Message.objects.create(
        chat=chat,
        turn=number,
        role=Message.Role.ASSISTANT,
        content=memory.strip_service_blocks(answer.content),
        state=turn.state,
        model_alias=alias,
    )
    if temporary:
        chat.save()
        return answer_message  # nothing of a temporary chat reaches memory: no after_turn
    chat.next_reason = ""
    chat.save()
    try:
        memory.after_turn(user, model=alias)
    except Exception:  # the answer is given; the optimizer must never break the chat
        logger.exception("after_turn failed for chat %s", chat.pk)
    return answer_message


def tool_loop(
    chat: Chat,
    number: int,
    model: Any,
    messages: list[dict[str, Any]],
    tools: list[Any],
    memory: LongTermMemory,
) -> Reply:
    """Call the model until it answers without tool calls; run the tools it asks for."""
    for _round in range(MAX_TOOL_ROUNDS):
        reply = model.chat(messages, tools)
        if not reply.tool_calls:
            return reply
        calls = [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in reply.tool_calls]
        asking = Message.objects.create(
            chat=chat,
            turn=number,
            role=Message.Role.ASSISTANT,
            content=memory.strip_service_blocks(reply.content),
            tool_calls=calls,
        )
        messages.append(as_model_message(asking))
        for tool_call in reply.tool_calls:
            result = run_tool(chat, tool_call.name, tool_call.arguments, memory)
            done = Message.objects.create(
                chat=chat,
                turn=number,
                role=Message.Role.TOOL,
                content=json.dumps(result, ensure_ascii=False),
                tool_call_id=tool_call.id,
                tool_name=tool_call.name,
            )
            messages.append(as_model_message(done))
    raise ModelError(
        _("The model kept calling tools for %(rounds)s rounds without answering. Try again.")
        % {"rounds": MAX_TOOL_ROUNDS}
    )


def run_tool(chat: Chat, name: str, arguments: str, memory: LongTermMemory) -> dict[str, Any]:
    """Run one tool call; unknown tools and bad arguments are answers, not exceptions."""
    if name == memory.tool_name:
        return memory.call_tool(
            chat.user, arguments, origin=origin_of(chat), temporary=chat.is_temporary
        )
    function = APP_TOOL_FUNCTIONS.get(name)
    if function is None:
        return {"error": {"kind": "invalid", "message": f"There is no tool named {name!r}."}}
    try:
        parsed = json.loads(arguments or "{}")
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict):
        return {"error": {"kind": "invalid", "message": "Arguments must be a JSON object."}}
    return function(parsed)


# --- chat features ------------------------------------------------------------------------


class CannotDoThat(Exception):
    """A chat feature is not available in this state; the message says why."""


def first_question(chat: Chat) -> Message | None:
    """The chat's first question, while it is still in the chat (not compacted away)."""
    if chat.summary:
        return None
    return chat.messages.filter(role=Message.Role.USER).order_by("id").first()


def edit_first_message(chat: Chat, text: str) -> Message:
    """Replace the first question and ask it again; later turns are dropped."""
    if first_question(chat) is None:
        raise CannotDoThat(_("This chat has no first message to edit any more."))
    with transaction.atomic():
        chat.messages.all().delete()
    return run_turn(chat, text, reason=FIRST_MESSAGE_EDITED)


def regenerate_first_answer(chat: Chat) -> Message:
    """Ask the first question again for a new first answer; later turns are dropped."""
    question = first_question(chat)
    if question is None:
        raise CannotDoThat(_("This chat has no first answer to regenerate any more."))
    text = question.content
    with transaction.atomic():
        chat.messages.all().delete()
    return run_turn(chat, text, reason=FIRST_ANSWER_REGENERATED)


def compact_history(chat: Chat, keep_turns: int = 1) -> int:
    """Replace all but the last ``keep_turns`` turns with a summary; return turns replaced.

    The summary is made from what the person and the agent said, never from the memory text
    or the memory state. When turns are kept, the memory text of the replaced questions moves,
    word for word, to the first question kept: the model still sees the block it was given, so
    the next turn passes the state of the last answer left with ``reason="compacted"`` and gets
    only what changed since. When nothing is kept, no answer is left: the next turn's state is
    ``None`` and it gets the full block.
    """
    turns = sorted(set(chat.messages.filter(failed=False).values_list("turn", flat=True)))
    old = turns[: len(turns) - keep_turns] if keep_turns else turns
    if not old:
        raise CannotDoThat(_("There are no older turns to compact yet."))
    transcript: list[tuple[str, str]] = []
    if chat.summary:
        transcript.append(("summary", chat.summary))
    carried: list[str] = []
    for message in chat.messages.filter(turn__in=old, failed=False).order_by("id"):
        if message.role == Message.Role.USER or message.is_answer:
            transcript.append((message.role, message.content))
        if message.role == Message.Role.USER and message.memory_text:
            carried.append(message.memory_text)
    summary = chat_model().summarize(transcript)
    with transaction.atomic():
        chat.messages.filter(turn__lte=old[-1]).delete()
        first_kept = (
            chat.messages.filter(role=Message.Role.USER, failed=False).order_by("id").first()
        )
        if first_kept is not None and carried:
            first_kept.memory_text = "\n\n".join([*carried, first_kept.memory_text]).strip()
            first_kept.save(update_fields=["memory_text"])
        chat.summary = summary
        if not chat.is_temporary:  # a temporary chat stays temporary
            chat.next_reason = COMPACTED
        chat.save()
    return len(old)


def memory_log(chat: Chat) -> list[dict[str, Any]]:
    """For each question: the memory text the model received with it, and why (debugging)."""
    return [
        {
            "turn": message.turn,
            "question": message.content,
            "memory_text": message.memory_text,
            "reason": message.memory_reason or None,
            "group": message.group,
            "failed": message.failed,
            "at": message.created_at.astimezone(datetime.UTC).isoformat(),
        }
        for message in chat.messages.filter(role=Message.Role.USER).order_by("id")
    ]


#: How long a chat's title may be, in characters (the ellipsis included).
TITLE_CHARS = 60


def chat_title(text: str, limit: int = TITLE_CHARS) -> str:
    """A chat's title from its first question: whole words, with "…" when the text is longer.

    A single word longer than the limit is the one thing cut inside a word.
    """
    words = " ".join(text.split())
    if len(words) <= limit:
        return words
    cut = words[: limit - 1]
    if words[limit - 1] != " " and " " in cut:
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip(" ,;:.-–—") + "…"
