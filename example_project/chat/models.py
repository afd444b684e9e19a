"""Chats and their messages.

A turn is one question of the person and everything the agent did to answer it: assistant
messages that call tools, the tools' results and the final answer. The memory ``state`` that
``begin_turn`` returned is stored with the final answer as its service part: it is never shown,
never sent to the model and never part of the text a compaction summarises.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

#: ``Chat.next_reason`` of a temporary chat, for its whole life: it neither reads nor writes memory.
TEMPORARY = "temporary"


class Chat(models.Model):
    """One conversation of a person with the agent."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="chats"
    )
    title = models.CharField(_("title"), max_length=200, blank=True)
    is_group = models.BooleanField(
        _("group chat"),
        default=False,
        help_text=_("Memory is personal: in a group chat the agent gets no memory block."),
    )
    summary = models.TextField(
        _("summary of compacted turns"),
        blank=True,
        help_text=_("Older turns replaced by a summary when the history was compacted."),
    )
    next_reason = models.CharField(
        _("reason for the next turn"),
        max_length=40,
        blank=True,
        help_text=_('Passed to begin_turn on the next turn, e.g. "compacted".'),
    )
    created_at = models.DateTimeField(pgettext_lazy("chat", "created"), auto_now_add=True)
    updated_at = models.DateTimeField(pgettext_lazy("chat", "updated"), auto_now=True)

    class Meta:
        ordering = ["-updated_at", "-id"]
        verbose_name = _("chat")
        verbose_name_plural = _("chats")

    def __str__(self) -> str:
        return self.title or str(_("New chat"))

    @property
    def is_temporary(self) -> bool:
        """A temporary chat: memory is neither read nor written in it, and it stays so."""
        return self.next_reason == TEMPORARY


class Message(models.Model):
    """One message of a chat, in the order the model sees them."""

    class Role(models.TextChoices):
        USER = "user", _("person")
        ASSISTANT = "assistant", _("agent")
        TOOL = "tool", _("tool result")

    chat = models.ForeignKey(Chat, on_delete=models.CASCADE, related_name="messages")
    turn = models.PositiveIntegerField(_("turn"))
    role = models.CharField(_("role"), max_length=12, choices=Role.choices)
    content = models.TextField(_("content"), blank=True)
    # The person's question: the memory text added to it, as the model received it.
    memory_text = models.TextField(_("memory text sent with the question"), blank=True)
    memory_reason = models.CharField(_("reason passed to begin_turn"), max_length=40, blank=True)
    group = models.BooleanField(_("group turn"), default=False)
    # An assistant message calling tools: [{"id", "name", "arguments"}].
    tool_calls = models.JSONField(_("tool calls"), null=True, blank=True)
    # A tool result.
    tool_call_id = models.CharField(_("tool call id"), max_length=200, blank=True)
    tool_name = models.CharField(_("tool name"), max_length=200, blank=True)
    # The final answer: memory's state for the next turn (service part, never shown).
    state = models.JSONField(_("memory state"), null=True, blank=True)
    model_alias = models.CharField(_("model"), max_length=60, blank=True)
    # A failed turn stays on screen with the error but is never sent to the model again.
    failed = models.BooleanField(_("failed"), default=False)
    created_at = models.DateTimeField(pgettext_lazy("chat", "created"), auto_now_add=True)

    class Meta:
        ordering = ["id"]
        verbose_name = _("message")
        verbose_name_plural = _("messages")

    def __str__(self) -> str:
        return f"{self.role}: {self.content[:60]}"

    @property
    def is_answer(self) -> bool:
        """The final answer of a turn (an assistant message that calls no tools)."""
        return self.role == self.Role.ASSISTANT and not self.tool_calls
