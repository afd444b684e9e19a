"""Admin of the people's notes: finding them, and editing them through the front door.

The form only cleans what was typed (the same fields as the memory screen). ``save_model``
writes through :func:`~agent_memory.site.get_memory` with ``source="admin"``, so an edit passes
the checks, the person's lock, the history and the signals of every other path. A refusal found
under the lock (a limit, a duplicate, a stale version) is shown on the change form with what was
typed kept, and nothing is saved. An edit of a note deleted meanwhile opens the add form with
what was typed, to save as a new note of the same person.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.contrib.auth import get_user_model
from django.db.models import Q, QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.text import capfirst
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from .. import rules
from ..errors import AgentMemoryError, ErrorCode, NoteNotFound, StaleVersion
from ..forms import CategoriesField, ContentField, ValidUntilField, join_categories
from ..kinds import NoteSource
from ..models import MemoryNote, MemoryNoteVersion
from ..notes import Note, note_key
from ..site import get_memory
from ..wording import field_of
from .display import EMPTY, OpsListMixin, SearchByPersonMixin, StrictIdMixin, one_line, when

if TYPE_CHECKING:  # Django's admin and forms classes take their model only in the stubs
    NoteModelAdmin = admin.ModelAdmin[MemoryNote]
    NoteModelForm = forms.ModelForm[MemoryNote]
else:
    NoteModelAdmin = admin.ModelAdmin
    NoteModelForm = forms.ModelForm

#: How many of the most recent notes the category filter looks at to offer choices.
CATEGORY_CHOICES_SCAN = 2000
#: How many people and categories the side filters offer (search finds the rest).
FILTER_CHOICES = 30

#: Where a refused write waits on the request for the form shown again.
_REFUSAL = "agent_memory_admin_refusal"
#: Where the text typed for a note deleted meanwhile waits in the session for the add form.
_KEPT = "agent_memory_admin_kept_note"
#: The fields of an edit kept as a new note (``person`` becomes the new note's ``user``).
_KEPT_FIELDS = ("categories", "content", "valid_until")


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


def author_label(source: str) -> str:
    """Who wrote a note, in staff's words: ``"person"`` is "the person", never "you"."""
    labels = {str(key): str(label) for key, label in AUTHOR_LABELS.items()}
    return labels.get(source, source) if source else EMPTY


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


class Refused(Exception):
    """A write the front door refused: the message for the change form, and the field it is
    about (``None``: the form as a whole)."""

    def __init__(self, message: str, code: str, field: str | None = None) -> None:
        super().__init__(message)
        self.error = forms.ValidationError(message, code=code)
        self.field = field


class MemoryNoteAdminForm(NoteModelForm):
    """A note as ops edit it: each field cleaned by the rules; ``MemoryNoteAdmin.save_model``
    writes it. ``refusal``, set on the form shown again after a refused write, is its error."""

    refusal: Refused | None = None

    categories = CategoriesField(label=capfirst(_("categories")))
    content = ContentField(
        label=capfirst(_("content")),
        widget=forms.Textarea(attrs={"rows": 4, "maxlength": rules.MAX_CONTENT_CHARS}),
    )
    expected_version = forms.IntegerField(widget=forms.HiddenInput, required=False, min_value=1)
    # Whose note it is, sent back with an edit: if the note was deleted meanwhile, what was
    # typed is offered as a new note of the same person.
    person = forms.CharField(widget=forms.HiddenInput, required=False)
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
        if self.instance.pk:
            self.initial["expected_version"] = self.instance.version
            self.initial["person"] = self.instance.user_id
            if self.instance.valid_until is not None:
                self.initial["valid_until"] = timezone.localdate(self.instance.valid_until)

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        if self.refusal is not None and not self.errors:
            self.add_error(self.refusal.field, self.refusal.error)
        return cleaned


def _current(user_id: Any, note_id: int) -> Note | None:
    """The note as it is now, or ``None`` if it was deleted meanwhile."""
    try:
        return get_memory().note(user_id, note_id)
    except NoteNotFound:
        return None


def write_note(obj: MemoryNote, form: MemoryNoteAdminForm) -> Note:
    """Write the form's note through the site's memory (``source="admin"``): a change of
    ``obj`` at the version the form was loaded with, or a new note of the chosen person.
    A refusal is :class:`Refused` with the message for the form."""
    memory = get_memory()
    cleaned = form.cleaned_data
    categories, content = cleaned["categories"], cleaned["content"]
    pinned, until = bool(cleaned.get("pinned")), cleaned.get("valid_until")
    try:
        if obj.pk is None:
            (note,) = memory.create_notes(
                cleaned["user"],
                [{"categories": categories, "content": content, "valid_until": until}],
                source=NoteSource.ADMIN,
                pinned=pinned,
            )
            return note
        # An untouched date keeps the note's own end (which may be a time of day).
        kept: dict[str, Any] = {"valid_until": until} if "valid_until" in form.changed_data else {}
        return memory.update_note(
            obj.user_id,
            obj.pk,
            cleaned.get("expected_version") or obj.version,
            categories,
            content,
            source=NoteSource.ADMIN,
            pinned=pinned,
            **kept,
        )
    except StaleVersion:
        current = _current(obj.user_id, obj.pk)
        message = gettext(
            "This note was changed elsewhere while you were editing it (it is now version "
            "%(version)s). Reload the page to see the current text, then edit again."
        ) % {"version": current.version if current else "?"}
        raise Refused(message, code=ErrorCode.STALE_VERSION) from None
    except NoteNotFound:
        message = gettext("This note no longer exists: it was deleted elsewhere.")
        raise Refused(message, code=ErrorCode.NOT_FOUND) from None
    except AgentMemoryError as error:
        raise Refused(error.message, error.kind, field_of(error)) from None


@admin.register(MemoryNote)
class MemoryNoteAdmin(OpsListMixin, StrictIdMixin, SearchByPersonMixin, NoteModelAdmin):
    form = MemoryNoteAdminForm

    @admin.display(description=_("author"), ordering="source")
    def author(self, obj: MemoryNote) -> str:
        """Who last wrote the note, in staff's words ("the person", not the screen's "you")."""
        return author_label(obj.source)

    @admin.display(description=_("first written by"))
    def first_author(self, obj: MemoryNote) -> str:
        """Who wrote the note's first version, in staff's words."""
        return author_label(obj.created_by)

    # Whole sentences, so that Russian declines the noun ("Выберите заметку памяти…"); the
    # admin's own "Select %s to change" puts the name in as it is.
    def changelist_view(self, request: HttpRequest, extra_context: Any = None) -> Any:
        titles = {"title": gettext("Select a memory note to change")}
        return super().changelist_view(request, {**titles, **(extra_context or {})})

    def add_view(self, request: HttpRequest, form_url: str = "", extra_context: Any = None) -> Any:
        titles = {"title": gettext("Add a memory note")}
        return super().add_view(request, form_url, {**titles, **(extra_context or {})})

    def changeform_view(
        self,
        request: HttpRequest,
        object_id: str | None = None,
        form_url: str = "",
        extra_context: Any = None,
    ) -> HttpResponse:
        """The admin's add and change pages; a write refused in ``save_model`` (its transaction
        rolled back) shows the same page again, with what was typed and the refusal on it."""
        if request.method == "POST" and object_id is not None:
            if self.get_object(request, unquote(object_id)) is None:
                return self._keep_as_new(request) or super().changeform_view(
                    request, object_id, form_url, extra_context
                )
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except Refused as refusal:
            if refusal.error.code == ErrorCode.NOT_FOUND:
                kept = self._keep_as_new(request)
                if kept is not None:
                    return kept
            setattr(request, _REFUSAL, refusal)
            return super().changeform_view(request, object_id, form_url, extra_context)

    def _keep_as_new(self, request: HttpRequest) -> HttpResponse | None:
        """An edit of a note deleted meanwhile: the add form, with what was typed in it and
        a message that says so; ``None`` for staff who may not add notes."""
        if not self.has_add_permission(request):
            return None
        kept: dict[str, Any] = {name: request.POST.get(name, "") for name in _KEPT_FIELDS}
        kept["pinned"] = bool(request.POST.get("pinned"))
        kept["user"] = request.POST.get("person", "")
        request.session[_KEPT] = kept
        self.message_user(
            request,
            gettext(
                "This note no longer exists: it was deleted elsewhere. What you typed is in the "
                "form below: save it as a new note, or leave this page to drop it."
            ),
            messages.WARNING,
        )
        return HttpResponseRedirect(
            reverse("admin:agent_memory_memorynote_add", current_app=self.admin_site.name)
        )

    def get_changeform_initial_data(self, request: HttpRequest) -> dict[str, Any]:
        """The add form's values from its address, or the text kept from an edit of a note
        deleted meanwhile (once)."""
        initial = dict(super().get_changeform_initial_data(request))
        kept = request.session.pop(_KEPT, None) if request.method == "GET" else None
        if isinstance(kept, dict):
            initial.update({name: value for name, value in kept.items() if value != ""})
        return initial

    def get_form(
        self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any
    ) -> Any:
        form = super().get_form(request, obj, change, **kwargs)
        refusal = getattr(request, _REFUSAL, None)
        if refusal is None:
            return form
        return type(form.__name__, (form,), {"refusal": refusal})

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        """Write the note through the site's memory; ``obj`` becomes the saved row (for the
        admin's history and the redirect)."""
        note = write_note(obj, form)
        obj.pk = note.id
        obj.refresh_from_db()
        obj._state.adding = False

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
        fields += ("expected_version", "person")
        if obj is not None:
            fields += ("version", "author", "first_author", "created_at", "updated_at")
            fields += ("earlier_versions",)
        return fields

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        if obj is None:
            return ()
        return (
            *("user", "version", "author", "first_author", "created_at", "updated_at"),
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
                author_label(item.source),
                when(item.changed_at),
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
            one_line(obj.content),
            join_categories(obj.categories) or EMPTY,
        )

    @admin.display(description=_("changed"), ordering="updated_at")
    def changed(self, obj: MemoryNote) -> str:
        return when(obj.updated_at, "SHORT_DATE_FORMAT")

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


__all__ = ["MemoryNoteAdmin", "MemoryNoteAdminForm", "Refused", "write_note"]
