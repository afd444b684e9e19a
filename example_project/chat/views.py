"""The chat pages: server-rendered forms, post/redirect/get, no JavaScript needed."""

from __future__ import annotations

import html
import json
import re
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from agent_memory.labels import MEMORY_TOOL_NAME, memory_action_title, tool_title

from . import agent
from .forms import CompactForm, GroupForm, MessageForm
from .llm import ModelError
from .models import TEMPORARY, Chat, Message

MEMORY_WRITES = {"create", "update", "delete"}


def person_of(request: HttpRequest) -> Any:
    """The logged-in person (every view here requires a login)."""
    return request.user


def own_chat(request: HttpRequest, pk: int) -> Chat:
    return get_object_or_404(Chat, pk=pk, user=person_of(request))


def model_info() -> dict[str, Any]:
    """Which model answers, for the page: the demo agent is labelled as such."""
    try:
        model = agent.chat_model()
    except (ModelError, ImportError, TypeError, ValueError) as error:
        return {"is_demo": False, "name": "", "error": str(error)}
    return {"is_demo": bool(getattr(model, "is_demo", False)), "name": getattr(model, "name", "")}


def page(request: HttpRequest, chat: Chat | None, **context: Any) -> HttpResponse:
    chats = Chat.objects.filter(user=person_of(request))[:50]
    return render(
        request,
        "chat/chat.html",
        {"chat": chat, "chats": chats, "model": model_info(), **context},
    )


@login_required
@require_GET
def home(request: HttpRequest) -> HttpResponse:
    latest = Chat.objects.filter(user=person_of(request)).first()
    if latest is not None:
        return redirect("chat:detail", pk=latest.pk)
    return page(request, None)


@login_required
@require_POST
def new_chat(request: HttpRequest) -> HttpResponse:
    """A new chat; with ``temporary=1`` a temporary one, which neither reads nor writes memory."""
    temporary = request.POST.get("temporary") == "1"
    chat = Chat.objects.create(user=person_of(request), next_reason=TEMPORARY if temporary else "")
    return redirect("chat:detail", pk=chat.pk)


@login_required
@require_GET
def chat_detail(request: HttpRequest, pk: int) -> HttpResponse:
    chat = own_chat(request, pk)
    items = feed(chat)
    return page(
        request,
        chat,
        feed=items,
        memory_used=memory_used(items),
        form=MessageForm(),
        compact_form=CompactForm(),
        first=agent.first_question(chat),
    )


@login_required
@require_POST
def send(request: HttpRequest, pk: int) -> HttpResponse:
    chat = own_chat(request, pk)
    form = MessageForm(request.POST)
    if not form.is_valid():
        return page(
            request,
            chat,
            feed=feed(chat),
            form=form,
            compact_form=CompactForm(),
            first=agent.first_question(chat),
        )
    agent.run_turn(chat, form.cleaned_data["text"])
    return redirect(reverse("chat:detail", kwargs={"pk": chat.pk}) + "#end")


@login_required
def edit_first(request: HttpRequest, pk: int) -> HttpResponse:
    chat = own_chat(request, pk)
    first = agent.first_question(chat)
    if first is None:
        messages.error(request, _("This chat has no first message to edit any more."))
        return redirect("chat:detail", pk=chat.pk)
    if request.method == "POST":
        form = MessageForm(request.POST)
        if form.is_valid():
            agent.edit_first_message(chat, form.cleaned_data["text"])
            return redirect(reverse("chat:detail", kwargs={"pk": chat.pk}) + "#end")
    else:
        form = MessageForm(initial={"text": first.content})
    return render(request, "chat/edit_first.html", {"chat": chat, "form": form})


@login_required
@require_POST
def regenerate_first(request: HttpRequest, pk: int) -> HttpResponse:
    chat = own_chat(request, pk)
    try:
        agent.regenerate_first_answer(chat)
    except agent.CannotDoThat as error:
        messages.error(request, str(error))
    return redirect(reverse("chat:detail", kwargs={"pk": chat.pk}) + "#end")


@login_required
@require_POST
def compact(request: HttpRequest, pk: int) -> HttpResponse:
    chat = own_chat(request, pk)
    form = CompactForm(request.POST)
    keep = form.cleaned_data["keep"] if form.is_valid() else 1
    try:
        replaced = agent.compact_history(chat, keep_turns=keep)
    except agent.CannotDoThat as error:
        messages.error(request, str(error))
    except ModelError as error:
        messages.error(request, _("Could not summarise the history: %(error)s") % {"error": error})
    else:
        messages.success(
            request, _("%(count)s older turns were replaced by a summary.") % {"count": replaced}
        )
    return redirect("chat:detail", pk=chat.pk)


@login_required
@require_POST
def group(request: HttpRequest, pk: int) -> HttpResponse:
    chat = own_chat(request, pk)
    form = GroupForm(request.POST)
    chat.is_group = bool(form.is_valid() and form.cleaned_data["is_group"])
    chat.save(update_fields=["is_group", "updated_at"])
    return redirect("chat:detail", pk=chat.pk)


@login_required
@require_POST
def delete_chat(request: HttpRequest, pk: int) -> HttpResponse:
    # Notes outlive chats: deleting one only clears their link to it (origins.forget_chat).
    own_chat(request, pk).delete()
    messages.success(request, _("The chat was deleted. Memory keeps its notes."))
    return redirect("chat:home")


@login_required
@require_GET
def memory_log(request: HttpRequest, pk: int) -> JsonResponse:
    """Debugging aid: the memory text the model received with each question of the chat."""
    chat = own_chat(request, pk)
    return JsonResponse({"chat": chat.pk, "turns": agent.memory_log(chat)})


def feed(chat: Chat) -> list[dict[str, Any]]:
    """The chat as the person sees it: questions, memory work and answers."""
    items: list[dict[str, Any]] = []
    results = {
        message.tool_call_id: message for message in chat.messages.filter(role=Message.Role.TOOL)
    }
    for message in chat.messages.all():
        if message.role == Message.Role.USER:
            notes = sent_notes(message.memory_text)
            items.append({"kind": "question", "message": message, "memory_notes": notes})
        elif message.role == Message.Role.ASSISTANT and message.tool_calls:
            if message.content:
                items.append({"kind": "answer", "message": message})
            for call in message.tool_calls:
                items.append(tool_item(call, results.get(call["id"])))
        elif message.role == Message.Role.ASSISTANT:
            items.append({"kind": "error" if message.failed else "answer", "message": message})
    return items


def memory_used(items: list[dict[str, Any]]) -> bool:
    """Whether memory took part in the chat: notes went with a question (an empty block names
    no ``"memory:…"`` key), or the agent called the memory tool."""
    return any(
        (item["kind"] == "question" and '"memory:' in item["message"].memory_text)
        or (item["kind"] == "tool" and item["is_memory"])
        for item in items
    )


def tool_item(call: dict[str, Any], result: Message | None) -> dict[str, Any]:
    arguments = safe_json(call.get("arguments"))
    answer = safe_json(result.content) if result is not None else {}
    action = arguments.get("action") if isinstance(arguments, dict) else None
    failed = isinstance(answer, dict) and "error" in answer
    is_memory = call["name"] == MEMORY_TOOL_NAME
    notes = arguments.get("notes") if isinstance(arguments, dict) else None
    count = len(notes) if action == "create" and isinstance(notes, list) and notes else 1
    return {
        "kind": "tool",
        "name": call["name"],
        "label": (
            memory_action_title(action, get_language(), count, failed=failed)
            if is_memory
            else tool_title(call["name"], get_language())
        ),
        "is_memory": is_memory,
        "action": action,
        "updated": is_memory and action in MEMORY_WRITES and not failed,
        # "Memory updated" links to the note written (/memory/#note-12), the first of a batch.
        "note_id": written_note_id(answer) if is_memory and not failed else None,
        "error": answer["error"].get("message") if failed else "",
        "arguments": json.dumps(arguments, ensure_ascii=False, indent=1),
        "result": json.dumps(answer, ensure_ascii=False, indent=1),
    }


SENT_NOTE = re.compile(r'<note key="memory:\d+"[^>]*?categories="([^"]*)"[^>]*>(.*?)</note>', re.S)


def sent_notes(memory_text: str) -> list[dict[str, str]]:
    """The notes of a memory block as the person reads them (categories and text), for the
    question's memory panel; the block itself stays one click further, exactly as sent."""
    return [
        {"categories": html.unescape(categories), "text": html.unescape(text)}
        for categories, text in SENT_NOTE.findall(memory_text or "")
    ]


def written_note_id(answer: Any) -> int | None:
    """The id of the note a memory tool call created or updated, from its answer."""
    if not isinstance(answer, dict):
        return None
    note = answer.get("note")
    if not isinstance(note, dict):
        notes = answer.get("notes")
        note = notes[0] if isinstance(notes, list) and notes else None
    note_id = note.get("id") if isinstance(note, dict) else None
    return note_id if isinstance(note_id, int) and not isinstance(note_id, bool) else None


def safe_json(text: Any) -> Any:
    try:
        return json.loads(text or "{}")
    except (TypeError, ValueError):
        return {"text": str(text)}
