"""Database tables of the app.

``MemoryNote`` holds the notes; ``MemoryUserLock`` is the per-user row the write lock takes on
databases without advisory locks (and on SQLite, the first write that takes the database's write
lock up front), and it keeps the person's note and character counts, so the limits are checked
without reading every note. The optimizer's tables (merge runs, snapshots, optimizer state) live
beside them.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from .kinds import MergeRunStatus, NoteSource
from .notes import MAX_VERSIONS
from .rules import text_digest

#: Who wrote a note, as the admin and the screen name it.
SOURCE_LABELS = {
    NoteSource.AGENT: _("agent"),
    NoteSource.PERSON: _("you"),
    NoteSource.MERGE: _("merge"),
    NoteSource.ADMIN: _("admin"),
    NoteSource.IMPORT: _("import"),
}


class MemoryNote(models.Model):
    """One note the agent keeps about a person."""

    #: Indexed only with the columns after it (below): each of those indexes serves a lookup
    #: by person, so an index of the person alone would be one more to write on every save.
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="memory_notes",
        verbose_name=_("person"),
        db_index=False,
    )
    categories = models.JSONField(_("categories"), default=list)
    content = models.TextField(_("content"))
    version = models.PositiveIntegerField(_("version"), default=1)
    source = models.CharField(
        _("written by"), max_length=10, choices=SOURCE_LABELS, default=NoteSource.AGENT
    )
    created_by = models.CharField(
        _("first written by"), max_length=10, choices=SOURCE_LABELS, default=NoteSource.AGENT
    )
    created_at = models.DateTimeField(_("created"), default=timezone.now)
    updated_at = models.DateTimeField(_("changed"), default=timezone.now)
    #: The person's standing rule: only the person, admin and code change or delete it.
    pinned = models.BooleanField(_("pinned"), default=False)
    #: The moment the note stops holding; ``None`` keeps it until deleted.
    valid_until = models.DateTimeField(_("valid until"), null=True, blank=True)
    origin = models.CharField(
        _("saved in"),
        max_length=200,
        blank=True,
        default="",
        help_text=_("Where the note was saved, as the host names it (e.g. chat:42)."),
    )
    #: :func:`~agent_memory.rules.text_digest` of ``content``: the duplicate check looks up only
    #: the notes with the same text through it. Set on every save.
    text_key = models.CharField(_("text key"), max_length=32, default="", editable=False)

    class Meta:
        verbose_name = _("memory note")
        verbose_name_plural = _("memory notes")
        indexes = [
            models.Index(fields=["user", "-updated_at", "-id"], name="agent_memory_note_recent"),
            models.Index(fields=["user", "text_key"], name="agent_memory_note_text"),
            # The purge of expired notes reads only the notes that have an end.
            models.Index(
                fields=["valid_until"],
                name="agent_memory_note_expiry",
                condition=models.Q(valid_until__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return f"memory:{self.pk}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        self.text_key = text_digest(self.content)
        update_fields = kwargs.get("update_fields")
        if update_fields is not None and "content" in update_fields:
            kwargs["update_fields"] = {*update_fields, "text_key"}
        super().save(*args, **kwargs)


class MemoryUserLock(models.Model):
    """A row per person: locked to serialise their memory writes where no advisory lock exists,
    and holding how many notes and characters they have saved.

    The counts change in the same transaction as every write, delete, merge and revert of the
    ``DjangoStore``; ``manage.py memory_check`` recounts them and repairs any drift.
    """

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", primary_key=True
    )
    writes = models.PositiveBigIntegerField(default=0)
    # Plain (signed) integers: a count gone wrong is repaired, it never blocks a delete.
    note_count = models.BigIntegerField(_("notes"), default=0)
    total_chars = models.BigIntegerField(_("characters"), default=0)
    #: The person's memory switch: off, the agent neither sees nor saves notes.
    memory_enabled = models.BooleanField(_("memory on"), default=True)

    class Meta:
        verbose_name = _("memory write lock")
        verbose_name_plural = _("memory write locks")

    def __str__(self) -> str:
        return f"memory write lock of {self.user_id}"


class MemoryNoteVersion(models.Model):
    """An earlier version of a note, kept so the person can see who changed what and undo it.

    The last ten per note are kept; they go with their note (delete, expiry, erase, merge).
    Each has one of ten slots (its version modulo ten), one row per slot and note: keeping a
    version writes over the one ten versions older in its slot, so a note never has more than
    ten rows here, and on PostgreSQL the row is changed where it lies (with room on its page, a
    HOT update: none of its indexes touched) rather than a row added and another deleted.
    """

    #: Both keys are indexed only with the columns after them (the constraint and the index
    #: below), as for :class:`MemoryNote`.
    note = models.ForeignKey(
        MemoryNote,
        on_delete=models.CASCADE,
        related_name="versions",
        verbose_name=_("note"),
        db_index=False,
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="+",
        verbose_name=_("person"),
        db_index=False,
    )
    version = models.PositiveIntegerField(_("version"))
    #: ``version % MAX_VERSIONS``: where among the note's ten rows this version is kept.
    slot = models.PositiveSmallIntegerField(_("slot"), editable=False)
    categories = models.JSONField(_("categories"), default=list)
    content = models.TextField(_("content"))
    pinned = models.BooleanField(_("pinned"), default=False)
    valid_until = models.DateTimeField(_("valid until"), null=True, blank=True)
    source = models.CharField(_("written by"), max_length=10, choices=SOURCE_LABELS)
    #: When this version was written (the note's ``updated_at`` then).
    changed_at = models.DateTimeField(_("changed"))

    class Meta:
        verbose_name = _("earlier version of a note")
        verbose_name_plural = _("earlier versions of notes")
        constraints = [
            models.UniqueConstraint(fields=["note", "slot"], name="agent_memory_version_slot"),
            models.CheckConstraint(
                condition=models.Q(slot__lt=MAX_VERSIONS), name="agent_memory_version_slots"
            ),
        ]
        indexes = [models.Index(fields=["user", "note"], name="agent_memory_version_user")]

    def __str__(self) -> str:
        return f"memory:{self.note_id} v{self.version}"


class MemoryAccessToken(models.Model):
    """A token the person made for an app that reaches their memory over MCP.

    Only a digest of the token is kept; the token itself is shown once, when it is made.
    """

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="memory_access_tokens",
        verbose_name=_("person"),
    )
    name = models.CharField(_("name"), max_length=100)
    digest = models.CharField(_("token digest"), max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(_("created"), default=timezone.now)
    last_used_at = models.DateTimeField(_("last used"), null=True, blank=True)
    revoked_at = models.DateTimeField(_("revoked"), null=True, blank=True)

    class Meta:
        verbose_name = _("connected app")
        verbose_name_plural = _("connected apps")
        indexes = [models.Index(fields=["user", "-created_at"], name="agent_memory_token_user")]

    def __str__(self) -> str:
        return self.name


# --- the optimizer: merge runs, snapshots of merged notes, per-person state ------------------

#: Version of the JSON shapes stored in ``MergeRun`` and ``MergedNoteSnapshot``.
MERGE_SCHEMA_VERSION = 1
#: The proposals of a run whose text is erased (the merge policy's ``ERASED_PROPOSALS``); the
#: retention purge's index leaves such runs out.
ERASED_RUN_PROPOSALS = {"schema": MERGE_SCHEMA_VERSION, "erased": True}


RUN_STATUS_LABELS = {
    MergeRunStatus.RUNNING: _("running"),
    MergeRunStatus.SUCCEEDED: _("succeeded"),
    MergeRunStatus.FAILED: _("failed"),
}


class MergeRun(models.Model):
    """One optimizer run for one person: the model's proposals and what became of each group.

    A run is claimed with a lease (``lease_expires_at``); only one live run per person. Note texts
    live only in ``proposals`` and in the snapshots; erasing the person's memory blanks them.
    """

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="memory_merge_runs",
        verbose_name=_("person"),
    )
    status = models.CharField(
        _("status"),
        max_length=10,
        choices=RUN_STATUS_LABELS,
        default=MergeRunStatus.RUNNING,
    )
    model = models.CharField(_("model alias"), max_length=100, blank=True, default="")
    started_at = models.DateTimeField(_("started"), default=timezone.now)
    lease_expires_at = models.DateTimeField(_("lease expires"))
    finished_at = models.DateTimeField(_("finished"), null=True, blank=True)
    reverted_at = models.DateTimeField(_("reverted"), null=True, blank=True)
    proposals = models.JSONField(_("proposals"), default=dict, blank=True)
    applied = models.JSONField(_("applied groups"), default=list, blank=True)
    rejected = models.JSONField(_("rejected groups"), default=list, blank=True)
    reverted = models.JSONField(_("reverted groups"), default=list, blank=True)
    error = models.TextField(_("failure reason"), blank=True, default="")
    schema_version = models.PositiveSmallIntegerField(
        _("schema version"), default=MERGE_SCHEMA_VERSION
    )

    class Meta:
        verbose_name = _("optimization run")
        verbose_name_plural = _("optimization runs")
        indexes = [
            models.Index(fields=["user", "status"], name="agent_memory_run_live"),
            models.Index(fields=["user", "-started_at"], name="agent_memory_run_recent"),
            # The retention purge: finished runs whose text is not erased yet (erased ones,
            # every run ever kept, stay out of it).
            models.Index(
                fields=["finished_at"],
                name="agent_memory_run_unerased",
                condition=~models.Q(proposals=ERASED_RUN_PROPOSALS),
            ),
        ]

    def __str__(self) -> str:
        return gettext("Run %(id)s (%(status)s)") % {
            "id": self.pk,
            "status": self.get_status_display(),
        }


class MergedNoteSnapshot(models.Model):
    """The source notes of one applied merge group, kept so the person can revert the merge."""

    run = models.ForeignKey(
        MergeRun, on_delete=models.CASCADE, related_name="snapshots", verbose_name=_("run")
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="+",
        verbose_name=_("person"),
    )
    group_index = models.PositiveIntegerField(_("group"))
    merged_note_id = models.BigIntegerField(_("merged note id"))
    merged_version = models.PositiveIntegerField(_("merged note version"))
    sources = models.JSONField(_("source notes"), default=dict)
    created_at = models.DateTimeField(_("created"), default=timezone.now)

    class Meta:
        verbose_name = _("merged note snapshot")
        verbose_name_plural = _("merged note snapshots")
        constraints = [
            models.UniqueConstraint(
                fields=["run", "group_index"], name="agent_memory_snapshot_group"
            ),
        ]
        indexes = [
            models.Index(fields=["user", "run"], name="agent_memory_snapshot_user"),
            models.Index(fields=["created_at"], name="agent_memory_snapshot_age"),
        ]

    def __str__(self) -> str:
        return gettext("Snapshot of %(key)s") % {"key": f"memory:{self.merged_note_id}"}


#: The optimizer states of people active since their last success (the sweep runs them when
#: due); the due query filters by it word for word, so PostgreSQL uses the partial index.
WANTS_RUN = models.Q(last_activity_at__isnull=False) & (
    models.Q(last_success_at__isnull=True)
    | models.Q(last_activity_at__gt=models.F("last_success_at"))
)


class OptimizerState(models.Model):
    """Per-person optimizer state: backoff after failures and when the next run is due."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="+",
        verbose_name=_("person"),
    )
    consecutive_failures = models.PositiveIntegerField(_("failures in a row"), default=0)
    next_run_at = models.DateTimeField(_("next run"), null=True, blank=True)
    last_success_at = models.DateTimeField(_("last success"), null=True, blank=True)
    last_activity_at = models.DateTimeField(_("last activity"), null=True, blank=True)
    model = models.CharField(_("model alias"), max_length=100, blank=True, default="")
    notes_fingerprint = models.CharField(
        _("notes at the last success"), max_length=64, blank=True, default=""
    )

    class Meta:
        verbose_name = _("optimizer state")
        verbose_name_plural = _("optimizer states")
        indexes = [
            # The sweep's due query: only people active since their last success are in it.
            models.Index(
                fields=["next_run_at", "user"],
                name="agent_memory_state_wanted",
                condition=WANTS_RUN,
            )
        ]

    def __str__(self) -> str:
        # The person, not their id: the admin titles the state's page with it.
        return gettext("Optimizer state of %(person)s") % {"person": self.user}


class NoteVector(models.Model):
    """A note's embedding for meaning-based search: which model made it, from which text."""

    note = models.OneToOneField(
        MemoryNote,
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="vector",
        verbose_name=_("note"),
    )
    model = models.CharField(_("embedding model"), max_length=200)
    digest = models.CharField(_("text digest"), max_length=32)
    vector = models.BinaryField(_("vector"))
    updated_at = models.DateTimeField(_("changed"), default=timezone.now)

    class Meta:
        verbose_name = _("note vector")
        verbose_name_plural = _("note vectors")

    def __str__(self) -> str:
        return f"vector of memory:{self.note_id}"
