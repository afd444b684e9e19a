"""Django admin for ops staff: notes, optimizer runs, merge snapshots and optimizer state.

Edits of notes go through :class:`~agent_memory.memory.LongTermMemory` with ``source="admin"``:
the same validation, limits, duplicates and versions as the agent and the person; a write that
breaks a rule is refused with the rule's own message. Runs and snapshots are read-only.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from django import forms
from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.db.models import IntegerField, Q, QuerySet
from django.http import HttpRequest
from django.utils import formats, timezone
from django.utils.html import format_html, format_html_join
from django.utils.text import capfirst
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from . import rules
from .errors import AgentMemoryError, NoteNotFound, StaleVersion
from .forms import CategoriesField, ContentField, ValidUntilField, join_categories
from .kinds import NoteSource
from .models import (
    MemoryAccessToken,
    MemoryNote,
    MemoryNoteVersion,
    MergedNoteSnapshot,
    MergeRun,
    OptimizerState,
)
from .notes import Note, note_key
from .optimizer.reasons import translate_reason
from .site import get_memory
from .wording import revert_message

if TYPE_CHECKING:  # Django's admin and forms classes take their model only in the stubs
    AnyModelAdmin = admin.ModelAdmin[Any]
    NoteModelAdmin = admin.ModelAdmin[MemoryNote]
    StateModelAdmin = admin.ModelAdmin[OptimizerState]
    NoteModelForm = forms.ModelForm[MemoryNote]
else:
    AnyModelAdmin = NoteModelAdmin = StateModelAdmin = admin.ModelAdmin
    NoteModelForm = forms.ModelForm

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
        if isinstance(field, IntegerField) and rules.parse_id(object_id) is None:
            return None
        return super().get_object(request, object_id, from_field)  # type: ignore[misc]


def _username_field() -> str:
    return f"user__{get_user_model().USERNAME_FIELD}"


#: How an empty value looks in every list and form of this app's admin.
EMPTY = "—"


class OpsListMixin:
    """What every list of this app's admin shares: one look for empty values, and the count
    under the list in words with the right plural ("5 запусков оптимизатора")."""

    empty_value_display = EMPTY

    class Media:
        css = {"all": ("agent_memory/admin.css",)}

    @admin.display(description=_("person"), ordering="user")
    def person(self, obj: Any) -> str:
        return _one_line(str(obj.user), "am-cut-short")

    def count_label(self, count: int) -> str:
        """``"5 memory notes"``: each admin says it with its own ``ngettext``."""
        raise NotImplementedError


def group_label(index: Any) -> str:
    """ "Group 1" for the first proposed group (stored 0-based, shown 1-based everywhere)."""
    return gettext("Group %(number)s") % {"number": int(index or 0) + 1}


def _when(value: Any, short: str = "SHORT_DATETIME_FORMAT") -> str:
    """A date (and time) short enough for a list column; the full one is its tooltip."""
    if value is None:
        return EMPTY
    local = timezone.localtime(value) if timezone.is_aware(value) else value
    return format_html(
        '<span style="white-space: nowrap" title="{}">{}</span>',
        formats.date_format(local, "DATETIME_FORMAT"),
        formats.date_format(local, short),
    )


def _one_line(text: str, css_class: str = "am-cut") -> str:
    """Text on one line, cut with "…" where its column ends (``admin.css``); the full text is
    its tooltip."""
    if not text:
        return EMPTY
    return format_html('<span class="{}" title="{}">{}</span>', css_class, text, text)


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

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        value = self.value()
        return queryset.filter(user_id=value) if value else queryset


#: Who wrote a note, in staff's words (the model's labels say "you" to the person).
AUTHOR_LABELS = {
    NoteSource.AGENT: _("the agent"),
    NoteSource.PERSON: _("the person"),
    NoteSource.MERGE: _("an automatic merge"),
    NoteSource.ADMIN: _("support staff"),
    NoteSource.IMPORT: _("an import"),
}


class AuthorListFilter(admin.SimpleListFilter):
    """Notes by who last wrote them, worded for staff ("By author", "the person")."""

    title = _("author")
    parameter_name = "source__exact"  # the address the field's own filter had

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[Any, str]]:
        return [(str(source), str(label)) for source, label in AUTHOR_LABELS.items()]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        value = self.value()
        return queryset.filter(source=value) if value else queryset


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

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
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


def _current(user_id: Any, note_id: int) -> Note | None:
    """The note as it is now, or ``None`` if it was deleted meanwhile."""
    try:
        return get_memory().note(user_id, note_id)
    except NoteNotFound:
        return None


class MemoryNoteAdminForm(NoteModelForm):
    """A note as ops edit it; saving writes through ``LongTermMemory`` (``source="admin"``)."""

    categories = CategoriesField(label=capfirst(_("categories")))
    content = ContentField(
        label=capfirst(_("content")),
        widget=forms.Textarea(attrs={"rows": 4, "maxlength": rules.MAX_CONTENT_CHARS}),
    )
    expected_version = forms.IntegerField(widget=forms.HiddenInput, required=False, min_value=1)
    pinned = forms.BooleanField(
        label=capfirst(_("pinned")),
        required=False,
        help_text=_(
            "A standing rule of the person: the agent reads it first and cannot change it."
        ),
    )
    valid_until = ValidUntilField(label=capfirst(_("valid until")))

    class Meta:
        model = MemoryNote
        fields = ("user", "categories", "content", "pinned")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.saved_note: Note | None = None
        if self.instance.pk:
            self.initial["expected_version"] = self.instance.version
            if self.instance.valid_until is not None:
                self.initial["valid_until"] = timezone.localdate(self.instance.valid_until)

    def clean(self) -> dict[str, Any]:
        """Write the note now, under the person's lock, so that every refusal (limits,
        duplicates, a stale version) shows on the form; the admin then only records it."""
        cleaned = super().clean() or {}
        if self.errors:
            return cleaned
        memory = get_memory()
        categories, content = cleaned["categories"], cleaned["content"]
        pinned = bool(cleaned.get("pinned"))
        until = cleaned.get("valid_until")
        try:
            if self.instance.pk:
                version = cleaned.get("expected_version") or self.instance.version
                # An untouched date keeps the note's own end (which may be a time of day).
                kept: dict[str, Any] = (
                    {"valid_until": until} if "valid_until" in self.changed_data else {}
                )
                self.saved_note = memory.update_note(
                    self.instance.user_id,
                    self.instance.pk,
                    version,
                    categories,
                    content,
                    source=NoteSource.ADMIN,
                    pinned=pinned,
                    **kept,
                )
            else:
                (self.saved_note,) = memory.create_notes(
                    cleaned["user"],
                    [{"categories": categories, "content": content, "valid_until": until}],
                    source=NoteSource.ADMIN,
                    pinned=pinned,
                )
        except StaleVersion:
            current = _current(self.instance.user_id, self.instance.pk)
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
class MemoryNoteAdmin(OpsListMixin, StrictIdMixin, SearchByPersonMixin, NoteModelAdmin):
    form = MemoryNoteAdminForm

    @admin.display(description=_("author"), ordering="source")
    def author(self, obj: MemoryNote) -> str:
        """Who last wrote the note, in staff's words ("the person", not the screen's "you")."""
        labels = {str(source): str(label) for source, label in AUTHOR_LABELS.items()}
        return labels.get(obj.source, obj.source) if obj.source else EMPTY

    # Whole sentences, so that Russian declines the noun ("Выберите заметку памяти…"); the
    # admin's own "Select %s to change" puts the name in as it is.
    def changelist_view(self, request: HttpRequest, extra_context: Any = None) -> Any:
        titles = {"title": gettext("Select a memory note to change")}
        return super().changelist_view(request, {**titles, **(extra_context or {})})

    def add_view(self, request: HttpRequest, form_url: str = "", extra_context: Any = None) -> Any:
        titles = {"title": gettext("Add a memory note")}
        return super().add_view(request, form_url, {**titles, **(extra_context or {})})

    # Sized for 1280 px beside the admin's menu and filters: the text (its categories under it)
    # takes what is left, cut with "…"; the version is on the note's page.
    list_display = ("key", "person", "excerpt", "author", "changed")
    list_filter = (PersonListFilter, AuthorListFilter, "pinned", CategoryListFilter)
    list_select_related = ("user",)
    raw_id_fields = ("user",)
    ordering = ("-updated_at", "-id")
    date_hierarchy = None
    show_full_result_count = False

    search_by = ("content",)

    def get_queryset(self, request: HttpRequest) -> QuerySet[MemoryNote]:
        """The notes still valid: one past its ``valid_until`` is gone for every reader."""
        live = Q(valid_until__isnull=True) | Q(valid_until__gt=timezone.now())
        return super().get_queryset(request).filter(live)

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        fields: tuple[str, ...] = ("user", "categories", "content", "pinned", "valid_until")
        fields += ("expected_version",)
        if obj is not None:
            fields += ("version", "source", "created_by", "created_at", "updated_at")
            fields += ("earlier_versions",)
        return fields

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        if obj is None:
            return ()
        return (
            *("user", "version", "source", "created_by", "created_at", "updated_at"),
            "earlier_versions",
        )

    @admin.display(description=_("earlier versions"))
    def earlier_versions(self, obj: MemoryNote) -> str:
        """The note's earlier versions (read-only): who wrote each, when, and its text."""
        versions = MemoryNoteVersion.objects.filter(note_id=obj.pk, user_id=obj.user_id)
        rows = [
            format_html(
                "<li>v{} · {} · {}<br>{} <small>{}</small></li>",
                item.version,
                item.get_source_display(),
                _when(item.changed_at),
                item.content,
                join_categories(item.categories),
            )
            for item in versions.order_by("-version")
        ]
        if not rows:
            return EMPTY
        return format_html("<ul>{}</ul>", format_html_join("", "{}", ((row,) for row in rows)))

    @admin.display(description=_("key"), ordering="id")
    def key(self, obj: MemoryNote) -> str:
        return note_key(obj.pk)

    def count_label(self, count: int) -> str:
        return ngettext("%(count)d memory note", "%(count)d memory notes", count) % {"count": count}

    @admin.display(description=_("content"))
    def excerpt(self, obj: MemoryNote) -> str:
        return format_html(
            '{}<small class="am-cut">{}</small>',
            _one_line(obj.content),
            join_categories(obj.categories) or EMPTY,
        )

    @admin.display(description=_("changed"), ordering="updated_at")
    def changed(self, obj: MemoryNote) -> str:
        return _when(obj.updated_at, "SHORT_DATE_FORMAT")

    def save_form(self, request: HttpRequest, form: Any, change: bool) -> Any:
        """The form already wrote the note through LongTermMemory: the object is that note as
        it was saved (read back, for the admin's history and the redirect)."""
        return MemoryNote.objects.get(pk=form.saved_note.id)

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        """Nothing left to save: the form wrote the note."""

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        """A note has no related objects to save."""

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        self._delete(obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[MemoryNote]) -> None:
        for obj in queryset:
            self._delete(obj)

    @staticmethod
    def _delete(obj: Any) -> None:
        memory = get_memory()
        try:
            memory.delete_note(obj.user_id, obj.pk, obj.version, source=NoteSource.ADMIN)
        except StaleVersion:
            # Changed since the confirmation page loaded: ops asked to delete this note anyway.
            current = _current(obj.user_id, obj.pk)
            if current is not None:
                memory.delete_note(obj.user_id, obj.pk, current.version, source=NoteSource.ADMIN)
        except NoteNotFound:
            pass


# --- the optimizer's records (read-only) -----------------------------------------------------


class ReadOnlyAdmin(OpsListMixin, AnyModelAdmin):
    """Records the app writes; ops read them."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


def revert_in_admin(
    model_admin: AnyModelAdmin, request: HttpRequest, targets: Sequence[tuple[Any, int, int | None]]
) -> None:
    """Revert each ``(person, run id, group or None)`` with the checks and messages of the
    memory screen; staff need the right to change notes."""
    if not request.user.has_perm("agent_memory.change_memorynote"):
        model_admin.message_user(
            request, gettext("Reverting a merge needs the right to change notes."), messages.ERROR
        )
        return
    memory = get_memory()
    for user_id, run_id, group in targets:
        # Groups are stored from 0 and shown from 1, as on the run's page ("Group 2").
        what = (
            gettext("Merge %(run)s") % {"run": run_id}
            if group is None
            else gettext("%(group)s of merge %(run)s")
            % {"group": group_label(group), "run": run_id}
        )
        try:
            memory.revert_merge(user_id, run_id, group)
        except AgentMemoryError as error:
            model_admin.message_user(request, f"{what}: {revert_message(error)}", messages.ERROR)
        else:
            model_admin.message_user(
                request,
                f"{what}: " + gettext("Merge reverted: the original notes are back."),
                messages.SUCCESS,
            )


def _reverted_indexes(run: Any) -> set[int]:
    return {int(item.get("index", 0)) for item in run.reverted or [] if isinstance(item, dict)}


def _still_applied(run: Any) -> list[dict[str, Any]]:
    """The run's applied groups that were not reverted since."""
    reverted = _reverted_indexes(run)
    return [
        item
        for item in run.applied or []
        if isinstance(item, dict) and int(item.get("index", 0)) not in reverted
    ]


def _group_list(items: list[dict[str, Any]]) -> str:
    """Groups as "Group 2: memory:4, memory:5 → memory:9", one a line."""
    if not items:
        return EMPTY
    return format_html(
        "<ul style='margin: 0; padding-left: 1.2em'>{}</ul>",
        format_html_join(
            "",
            "<li><strong>{}</strong>: {} → <code>{}</code></li>",
            (
                (
                    group_label(item.get("index", 0)),
                    ", ".join(note_key(int(i)) for i in item.get("source_ids", [])),
                    note_key(int(item["merged_id"])) if item.get("merged_id") else EMPTY,
                )
                for item in items
            ),
        ),
    )


@admin.register(MergeRun)
class MergeRunAdmin(StrictIdMixin, SearchByPersonMixin, ReadOnlyAdmin):
    # Sized for 1280 px beside the admin's menu and filters: the start time opens the run,
    # whose page has its id, model and finish time (the model is a filter too).
    list_display = (
        "started",
        "person",
        "status",
        "applied_count",
        "rejected_count",
        "reverted_on",
    )
    list_display_links = ("started",)
    list_filter = ("status", "model")
    list_select_related = ("user",)
    ordering = ("-started_at", "-id")
    actions = ("revert_runs",)
    fields = (
        "user",
        "status",
        "model",
        "started_at",
        "lease_expires_at",
        "finished_at",
        "reverted_at",
        "failure",
        "rejection_reasons",
        "applied_groups",
        "reverted_groups",
        "proposed_groups",
        "schema_version",
    )
    readonly_fields = fields

    @admin.action(description=_("Revert these merges (the original notes come back)"))
    def revert_runs(self, request: HttpRequest, queryset: QuerySet[MergeRun]) -> None:
        revert_in_admin(self, request, [(run.user_id, run.pk, None) for run in queryset])

    def count_label(self, count: int) -> str:
        return ngettext("%(count)d optimization run", "%(count)d optimization runs", count) % {
            "count": count
        }

    @admin.display(description=_("started"), ordering="started_at")
    def started(self, obj: MergeRun) -> str:
        return _when(obj.started_at)

    # Not named "reverted": the admin would show the model's field of that name instead.
    @admin.display(description=_("reverted"), ordering="reverted_at")
    def reverted_on(self, obj: MergeRun) -> str:
        left = len(_still_applied(obj))
        if obj.reverted_at is None or not left:
            return _when(obj.reverted_at, "SHORT_DATE_FORMAT")
        # Some groups reverted, others still applied: not "Reverted" as a whole.
        reverted = len(_reverted_indexes(obj))
        return format_html(
            "{} {}",
            _when(obj.reverted_at, "SHORT_DATE_FORMAT"),
            gettext("(%(reverted)s of %(total)s groups)")
            % {"reverted": reverted, "total": reverted + left},
        )

    @admin.display(description=_("failure reason"))
    def failure(self, obj: MergeRun) -> str:
        return translate_reason(obj.error) if obj.error else EMPTY

    @admin.display(description=_("applied"))
    def applied_count(self, obj: MergeRun) -> int:
        return len(obj.applied or [])

    @admin.display(description=_("rejected"))
    def rejected_count(self, obj: MergeRun) -> int:
        return len(obj.rejected or [])

    @admin.display(description=_("rejection reasons"))
    def rejection_reasons(self, obj: MergeRun) -> str:
        """Each rejected group: the texts of the notes it names, what the model proposed, and
        why it was refused, in the admin user's language."""
        rejected = obj.rejected or []
        if not rejected:
            return EMPTY
        texts = self._note_texts(obj, [i for item in rejected for i in item.get("ids", [])])
        proposed = self._proposed(obj)
        rows = []
        for item in rejected:
            index = int(item.get("index", 0))
            stored = item.get("reason")
            reason = (
                translate_reason(stored)
                if stored
                else gettext("(reason erased with the person's memory)")
            )
            rows.append(
                (
                    group_label(index),
                    self._sources(item.get("ids", []), texts),
                    self._proposal(proposed.get(index)),
                    item.get("code", "") or "",
                    reason,
                )
            )
        return format_html(
            '<table style="margin: 0"><thead><tr><th>{}</th><th>{}</th><th>{}</th><th>{}</th>'
            "</tr></thead><tbody>{}</tbody></table>",
            gettext("Group"),
            gettext("Notes it names"),
            gettext("Proposed text"),
            gettext("Reason"),
            format_html_join(
                "",
                # The checker's code ("polarity") is for developers: a tooltip, not text.
                '<tr><td style="white-space: nowrap">{}</td><td>{}</td><td>{}</td>'
                '<td><span title="{}">{}</span></td></tr>',
                rows,
            ),
        )

    @staticmethod
    def _note_texts(obj: MergeRun, ids: list[Any]) -> dict[int, str]:
        """The current text of each named note of this person (deleted ones are gone)."""
        wanted = [int(i) for i in ids if str(i).isdigit()]
        rows = MemoryNote.objects.filter(user_id=obj.user_id, pk__in=wanted)
        return dict(rows.values_list("pk", "content"))

    @staticmethod
    def _proposed(obj: MergeRun) -> dict[int, Any]:
        groups = (obj.proposals or {}).get("groups") or []
        return dict(enumerate(groups)) if isinstance(groups, list) else {}

    @staticmethod
    def _sources(ids: list[Any], texts: dict[int, str]) -> str:
        if not ids:
            return EMPTY
        gone = gettext("no longer in memory")
        return format_html(
            "<ul style='margin: 0; padding-left: 1.2em'>{}</ul>",
            format_html_join(
                "",
                "<li><code>{}</code> {}</li>",
                (
                    (
                        note_key(int(i)),
                        texts.get(int(i))
                        if int(i) in texts
                        else format_html("<em>({})</em>", gone),
                    )
                    for i in ids
                ),
            ),
        )

    @staticmethod
    def _proposal(group: Any) -> str:
        if not isinstance(group, dict) or not isinstance(group.get("content"), str):
            return EMPTY
        categories = group.get("categories")
        shown = join_categories(categories) if isinstance(categories, list) else ""
        return format_html("{}<br><small>{}</small>", group["content"], shown or EMPTY)

    @admin.display(description=_("applied groups"))
    def applied_groups(self, obj: MergeRun) -> str:
        """The groups still applied: a reverted group is listed under the reverted ones (its
        merged note no longer exists)."""
        return _group_list(_still_applied(obj))

    @admin.display(description=_("reverted groups (kept apart)"))
    def reverted_groups(self, obj: MergeRun) -> str:
        return _group_list([item for item in obj.reverted or [] if isinstance(item, dict)])

    @admin.display(description=_("proposals"))
    def proposed_groups(self, obj: MergeRun) -> str:
        """The model's answer as stored, for digging deeper than the table above."""
        return format_html(
            "<details><summary>{}</summary>{}</details>",
            gettext("Show as stored (JSON)"),
            _pretty_json(obj.proposals or {}),
        )


@admin.register(MergedNoteSnapshot)
class MergedNoteSnapshotAdmin(StrictIdMixin, SearchByPersonMixin, ReadOnlyAdmin):
    list_display = (
        "id",
        "person",
        "run",
        "group_number",
        "merged_key",
        "merged_version",
        "created",
    )
    list_select_related = ("user",)
    ordering = ("-created_at", "-id")
    actions = ("revert_groups",)

    @admin.action(description=_("Revert these merged groups (the original notes come back)"))
    def revert_groups(self, request: HttpRequest, queryset: QuerySet[MergedNoteSnapshot]) -> None:
        targets = [(item.user_id, item.run_id, item.group_index) for item in queryset]
        revert_in_admin(self, request, targets)

    fields = (
        "user",
        "run",
        "group_number",
        "merged_key",
        "merged_version",
        "created_at",
        "source_notes",
    )
    readonly_fields = fields

    def count_label(self, count: int) -> str:
        return ngettext(
            "%(count)d merged note snapshot", "%(count)d merged note snapshots", count
        ) % {"count": count}

    @admin.display(description=_("group"), ordering="group_index")
    def group_number(self, obj: MergedNoteSnapshot) -> str:
        return group_label(obj.group_index)

    @admin.display(description=_("created"), ordering="created_at")
    def created(self, obj: MergedNoteSnapshot) -> str:
        return _when(obj.created_at)

    @admin.display(description=_("merged note"), ordering="merged_note_id")
    def merged_key(self, obj: MergedNoteSnapshot) -> str:
        return note_key(obj.merged_note_id)

    @admin.display(description=_("source notes"))
    def source_notes(self, obj: MergedNoteSnapshot) -> str:
        notes = (obj.sources or {}).get("notes") or []
        if not notes:
            return EMPTY
        return format_html(
            "<ul style='margin: 0; padding-left: 1.2em'>{}</ul>",
            format_html_join(
                "",
                "<li><code>{}</code> <small>{}</small><br>{}</li>",
                (
                    (
                        note_key(int(note.get("id", 0))),
                        join_categories(note.get("categories") or []) or EMPTY,
                        note.get("content") or EMPTY,
                    )
                    for note in notes
                    if isinstance(note, dict)
                ),
            ),
        )


@admin.register(OptimizerState)
class OptimizerStateAdmin(OpsListMixin, StrictIdMixin, SearchByPersonMixin, StateModelAdmin):
    """Per-person optimizer state; the one change ops make is resetting the backoff."""

    list_display = (
        "person",
        "consecutive_failures",
        "next_run",
        "last_success",
        "last_activity",
        "model_shown",
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
    # Only these: the stored digest is the optimizer's bookkeeping, not a form
    # for staff to edit (the one change they make is the action below).
    fields = readonly_fields

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def count_label(self, count: int) -> str:
        return ngettext("%(count)d optimizer state", "%(count)d optimizer states", count) % {
            "count": count
        }

    @admin.display(description=_("next run"), ordering="next_run_at")
    def next_run(self, obj: OptimizerState) -> str:
        return _when(obj.next_run_at)

    @admin.display(description=_("last success"), ordering="last_success_at")
    def last_success(self, obj: OptimizerState) -> str:
        return _when(obj.last_success_at)

    @admin.display(description=_("last activity"), ordering="last_activity_at")
    def last_activity(self, obj: OptimizerState) -> str:
        return _when(obj.last_activity_at)

    @admin.display(description=_("model alias"), ordering="model")
    def model_shown(self, obj: OptimizerState) -> str:
        return obj.model or EMPTY

    @admin.action(description=_("Reset backoff (forget failures; the next run is due now)"))
    def reset_backoff(self, request: HttpRequest, queryset: QuerySet[OptimizerState]) -> None:
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


# --- the people's access tokens for MCP clients ------------------------------------------------


@admin.register(MemoryAccessToken)
class MemoryAccessTokenAdmin(OpsListMixin, StrictIdMixin, SearchByPersonMixin, AnyModelAdmin):
    """The tokens people made on the memory screen: listed, and revocable in bulk; no digest is
    shown and none can be made or changed here (a token is shown only to its person)."""

    list_display = ("name", "person", "made", "last_used", "revoked")
    list_select_related = ("user",)
    list_filter = (("revoked_at", admin.EmptyFieldListFilter),)
    ordering = ("-created_at",)
    search_by = ("name",)
    fields = ("user", "name", "created_at", "last_used_at", "revoked_at")
    readonly_fields = fields
    actions = ("revoke",)

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def count_label(self, count: int) -> str:
        return ngettext("%(count)d access token", "%(count)d access tokens", count) % {
            "count": count
        }

    @admin.display(description=_("created"), ordering="created_at")
    def made(self, obj: MemoryAccessToken) -> str:
        return _when(obj.created_at)

    @admin.display(description=_("last used"), ordering="last_used_at")
    def last_used(self, obj: MemoryAccessToken) -> str:
        return _when(obj.last_used_at)

    @admin.display(description=_("revoked"), ordering="revoked_at")
    def revoked(self, obj: MemoryAccessToken) -> str:
        return _when(obj.revoked_at)

    @admin.action(description=_("Revoke the selected tokens"), permissions=["delete"])
    def revoke(self, request: HttpRequest, queryset: QuerySet[MemoryAccessToken]) -> None:
        count = queryset.filter(revoked_at=None).update(revoked_at=timezone.now())
        self.message_user(
            request,
            ngettext("%(count)d token revoked.", "%(count)d tokens revoked.", count)
            % {"count": count},
            messages.SUCCESS,
        )
