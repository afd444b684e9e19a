"""Django admin for ops staff: notes, optimizer runs, merge snapshots and optimizer state.

Edits of notes go through :class:`~agent_memory.memory.LongTermMemory` with ``source="admin"``:
the same validation, limits, duplicates and versions as the agent and the person; a write that
breaks a rule is refused with the rule's own message. Runs and snapshots are read-only.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.db.models import IntegerField, QuerySet
from django.http import HttpRequest
from django.utils.html import format_html, format_html_join
from django.utils.text import Truncator
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from . import rules
from .errors import AgentMemoryError, NoteNotFound, StaleVersion
from .memory import LongTermMemory
from .models import MemoryNote, MergedNoteSnapshot, MergeRun, OptimizerState
from .notes import note_key, parse_id
from .screen.forms import NoteFieldsMixin, join_categories

#: How many of the most recent notes the category filter looks at to offer choices.
CATEGORY_CHOICES_SCAN = 2000
#: How many people and categories the side filters offer (search finds the rest).
FILTER_CHOICES = 30


class StrictIdMixin:
    """Object pages of an integer key take ASCII digits that fit the database only: ``/²/``,
    ``/٣/`` or a 30-digit number is a missing object (the admin's redirect with a message),
    never a 500 and never note 3."""

    model: Any

    def get_object(self, request: HttpRequest, object_id: str, from_field: Any = None) -> Any:
        field = self.model._meta.get_field(from_field) if from_field else self.model._meta.pk
        if isinstance(field, IntegerField) and parse_id(object_id) is None:
            return None
        return super().get_object(request, object_id, from_field)  # type: ignore[misc]


def _username_field() -> str:
    return f"user__{get_user_model().USERNAME_FIELD}"


class SearchByPersonMixin:
    """Admin search by the person's username (whatever the user model calls it), plus the
    fields in ``search_by``."""

    search_by: tuple[str, ...] = ()

    def get_search_fields(self, request: HttpRequest) -> tuple[str, ...]:
        return (*self.search_by, _username_field())


def _pretty_json(value: Any) -> str:
    return format_html(
        '<pre style="white-space: pre-wrap; margin: 0">{}</pre>',
        json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True),
    )


# --- notes -------------------------------------------------------------------------------------


class PersonListFilter(admin.SimpleListFilter):
    """People who have notes (search by username finds anyone)."""

    title = _("person")
    parameter_name = "person"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[Any, str]]:
        ids = list(
            MemoryNote.objects.order_by("user_id")
            .values_list("user_id", flat=True)
            .distinct()[:FILTER_CHOICES]
        )
        people = get_user_model()._default_manager.filter(pk__in=ids)
        return [(str(person.pk), str(person)) for person in people]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        value = self.value()
        return queryset.filter(user_id=value) if value else queryset


class CategoryListFilter(admin.SimpleListFilter):
    """Notes in one category, compared case-insensitively like the rules compare them.

    Categories are a JSON list, which not every database can query inside; the match is made
    in Python over the notes the other filters and the search left.
    """

    title = _("category")
    parameter_name = "category"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        recent = MemoryNote.objects.order_by("-updated_at").values_list("categories", flat=True)
        counts: Counter[str] = Counter()
        names: dict[str, str] = {}
        for categories in recent[:CATEGORY_CHOICES_SCAN]:
            for name in categories or []:
                key = str(name).casefold()
                names.setdefault(key, str(name))
                counts[key] += 1
        return [(names[key], names[key]) for key, _ in counts.most_common(FILTER_CHOICES)]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        value = self.value()
        if not value:
            return queryset
        wanted = value.strip().casefold()
        ids = [
            pk
            for pk, categories in queryset.values_list("pk", "categories")
            if any(str(name).casefold() == wanted for name in categories or [])
        ]
        return queryset.filter(pk__in=ids)


class MemoryNoteAdminForm(NoteFieldsMixin, forms.ModelForm):
    """A note as ops edit it; saving writes through ``LongTermMemory`` (``source="admin"``)."""

    categories = forms.CharField(
        label=_("categories"),
        help_text=_("1 to 3, separated by commas, e.g. “Preferences, Language”."),
    )
    content = forms.CharField(
        label=_("content"),
        widget=forms.Textarea(attrs={"rows": 4, "maxlength": rules.MAX_CONTENT_CHARS}),
    )
    expected_version = forms.IntegerField(widget=forms.HiddenInput, required=False, min_value=1)

    class Meta:
        model = MemoryNote
        fields = ("user", "categories", "content")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.saved_note: Any = None
        if self.instance.pk:
            self.initial["categories"] = join_categories(self.instance.categories)
            self.initial["expected_version"] = self.instance.version

    def clean(self) -> dict[str, Any]:
        """Write the note now, under the person's lock, so that every refusal (limits,
        duplicates, a stale version) shows on the form; the admin then only records it."""
        cleaned = super().clean() or {}
        if self.errors:
            return cleaned
        memory = LongTermMemory()
        categories, content = cleaned["categories"], cleaned["content"]
        try:
            if self.instance.pk:
                version = cleaned.get("expected_version") or self.instance.version
                self.saved_note = memory.update_note(
                    self.instance.user_id,
                    self.instance.pk,
                    version,
                    categories,
                    content,
                    source="admin",
                )
            else:
                (self.saved_note,) = memory.create_notes(
                    cleaned["user"],
                    [{"categories": categories, "content": content}],
                    source="admin",
                )
        except StaleVersion:
            current = next(
                (n for n in memory.notes(self.instance.user_id) if n.id == self.instance.pk), None
            )
            raise forms.ValidationError(
                _(
                    "This note was changed elsewhere while you were editing it (it is now "
                    "version %(version)s). Reload the page to see the current text, then edit "
                    "again."
                ),
                code="stale_version",
                params={"version": current.version if current else "?"},
            ) from None
        except NoteNotFound:
            raise forms.ValidationError(
                _("This note no longer exists: it was deleted elsewhere."), code="not_found"
            ) from None
        except AgentMemoryError as error:
            raise forms.ValidationError(error.message, code=error.kind) from None
        return cleaned


@admin.register(MemoryNote)
class MemoryNoteAdmin(StrictIdMixin, SearchByPersonMixin, admin.ModelAdmin):
    form = MemoryNoteAdminForm
    list_display = ("key", "user", "categories_shown", "excerpt", "source", "version", "updated_at")
    list_display_links = ("key", "excerpt")
    list_filter = (PersonListFilter, "source", CategoryListFilter)
    list_select_related = ("user",)
    raw_id_fields = ("user",)
    ordering = ("-updated_at", "-id")
    date_hierarchy = None
    show_full_result_count = False

    search_by = ("content",)

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        fields: tuple[str, ...] = ("user", "categories", "content", "expected_version")
        if obj is not None:
            fields += ("version", "source", "created_at", "updated_at")
        return fields

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        if obj is None:
            return ()
        return ("user", "version", "source", "created_at", "updated_at")

    @admin.display(description=_("key"), ordering="id")
    def key(self, obj: MemoryNote) -> str:
        return note_key(obj.pk)

    @admin.display(description=_("categories"))
    def categories_shown(self, obj: MemoryNote) -> str:
        return join_categories(obj.categories)

    @admin.display(description=_("content"))
    def excerpt(self, obj: MemoryNote) -> str:
        return Truncator(obj.content).chars(80)

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        """The form already wrote the note through LongTermMemory; mirror the result."""
        note = form.saved_note
        obj.pk = note.id
        obj.user_id = note.user_id
        obj.categories = list(note.categories)
        obj.content = note.content
        obj.version = note.version
        obj.source = note.source
        obj.created_at = note.created_at
        obj.updated_at = note.updated_at
        obj._state.adding = False

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        self._delete(obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet) -> None:
        for obj in queryset:
            self._delete(obj)

    @staticmethod
    def _delete(obj: Any) -> None:
        memory = LongTermMemory()
        try:
            memory.delete_note(obj.user_id, obj.pk, obj.version)
        except StaleVersion:
            # Changed since the confirmation page loaded: ops asked to delete this note anyway.
            current = next((n for n in memory.notes(obj.user_id) if n.id == obj.pk), None)
            if current is not None:
                memory.delete_note(obj.user_id, obj.pk, current.version)
        except NoteNotFound:
            pass


# --- the optimizer's records (read-only) -----------------------------------------------------


class ReadOnlyAdmin(admin.ModelAdmin):
    """Records the app writes; ops read them."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(MergeRun)
class MergeRunAdmin(StrictIdMixin, SearchByPersonMixin, ReadOnlyAdmin):
    list_display = (
        "id",
        "user",
        "status",
        "model",
        "started_at",
        "finished_at",
        "applied_count",
        "rejected_count",
        "reverted_at",
    )
    list_filter = ("status", "model")
    list_select_related = ("user",)
    ordering = ("-started_at", "-id")
    fields = (
        "user",
        "status",
        "model",
        "started_at",
        "lease_expires_at",
        "finished_at",
        "reverted_at",
        "error",
        "rejection_reasons",
        "applied_groups",
        "proposed_groups",
        "schema_version",
    )
    readonly_fields = fields

    @admin.display(description=_("applied"))
    def applied_count(self, obj: MergeRun) -> int:
        return len(obj.applied or [])

    @admin.display(description=_("rejected"))
    def rejected_count(self, obj: MergeRun) -> int:
        return len(obj.rejected or [])

    @admin.display(description=_("rejection reasons"))
    def rejection_reasons(self, obj: MergeRun) -> str:
        rows = []
        for item in obj.rejected or []:
            ids = ", ".join(note_key(number) for number in item.get("ids", []))
            reason = item.get("reason") or gettext("(reason erased with the person's memory)")
            rows.append(
                (
                    gettext("Group %(number)s") % {"number": int(item.get("index", 0)) + 1},
                    ids or "—",
                    item.get("code", ""),
                    reason,
                )
            )
        if not rows:
            return gettext("None")
        return format_html(
            "<ul style='margin: 0; padding-left: 1.2em'>{}</ul>",
            format_html_join("", "<li><strong>{}</strong> ({}) <code>{}</code>: {}</li>", rows),
        )

    @admin.display(description=_("applied groups"))
    def applied_groups(self, obj: MergeRun) -> str:
        return _pretty_json(obj.applied or [])

    @admin.display(description=_("proposals"))
    def proposed_groups(self, obj: MergeRun) -> str:
        return _pretty_json(obj.proposals or {})


@admin.register(MergedNoteSnapshot)
class MergedNoteSnapshotAdmin(StrictIdMixin, SearchByPersonMixin, ReadOnlyAdmin):
    list_display = (
        "id",
        "user",
        "run",
        "group_index",
        "merged_key",
        "merged_version",
        "created_at",
    )
    list_select_related = ("user",)
    ordering = ("-created_at", "-id")
    fields = (
        "user",
        "run",
        "group_index",
        "merged_key",
        "merged_version",
        "created_at",
        "source_notes",
    )
    readonly_fields = fields

    @admin.display(description=_("merged note"), ordering="merged_note_id")
    def merged_key(self, obj: MergedNoteSnapshot) -> str:
        return note_key(obj.merged_note_id)

    @admin.display(description=_("source notes"))
    def source_notes(self, obj: MergedNoteSnapshot) -> str:
        return _pretty_json(obj.sources or {})


@admin.register(OptimizerState)
class OptimizerStateAdmin(StrictIdMixin, SearchByPersonMixin, admin.ModelAdmin):
    """Per-person optimizer state; the one change ops make is resetting the backoff."""

    list_display = (
        "user",
        "consecutive_failures",
        "next_run_at",
        "last_success_at",
        "last_activity_at",
        "model",
    )
    list_select_related = ("user",)
    ordering = ("-consecutive_failures", "next_run_at")
    actions = ("reset_backoff",)
    readonly_fields = (
        "user",
        "consecutive_failures",
        "next_run_at",
        "last_success_at",
        "last_activity_at",
        "model",
    )

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.action(description=_("Reset backoff (forget failures; the next run is due now)"))
    def reset_backoff(self, request: HttpRequest, queryset: QuerySet) -> None:
        count = queryset.update(consecutive_failures=0, next_run_at=None)
        self.message_user(
            request,
            ngettext(
                "Backoff reset for %(count)d person.",
                "Backoff reset for %(count)d people.",
                count,
            )
            % {"count": count},
            messages.SUCCESS,
        )
