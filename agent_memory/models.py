"""Database tables of the app.

``MemoryNote`` holds the notes; ``MemoryUserLock`` is the per-user row the write lock takes on
databases without advisory locks (and on SQLite, the first write that takes the database's write
lock up front). The optimizer's tables (merge runs, snapshots, optimizer state) live beside them.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _


class NoteSource(models.TextChoices):
    AGENT = "agent", _("agent")
    PERSON = "person", _("you")
    MERGE = "merge", _("merge")
    ADMIN = "admin", _("admin")


class MemoryNote(models.Model):
    """One note the agent keeps about a person."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="memory_notes",
        verbose_name=_("person"),
    )
    categories = models.JSONField(_("categories"), default=list)
    content = models.TextField(_("content"))
    version = models.PositiveIntegerField(_("version"), default=1)
    source = models.CharField(
        _("written by"), max_length=10, choices=NoteSource.choices, default=NoteSource.AGENT
    )
    created_at = models.DateTimeField(_("created"), default=timezone.now)
    updated_at = models.DateTimeField(_("changed"), default=timezone.now)

    class Meta:
        verbose_name = _("memory note")
        verbose_name_plural = _("memory notes")
        indexes = [
            models.Index(fields=["user", "-updated_at", "-id"], name="agent_memory_note_recent"),
        ]

    def __str__(self) -> str:
        return f"memory:{self.pk}"


class MemoryUserLock(models.Model):
    """A row per person, locked to serialise their memory writes where no advisory lock exists."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", primary_key=True
    )
    writes = models.PositiveBigIntegerField(default=0)

    class Meta:
        verbose_name = _("memory write lock")
        verbose_name_plural = _("memory write locks")

    def __str__(self) -> str:
        return f"memory write lock of {self.user_id}"
