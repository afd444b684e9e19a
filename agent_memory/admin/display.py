"""What every admin of this app shares: how empty values, dates, long texts, groups and JSON
look, strict object ids, search by the person's username, and the count under each list."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.db.models import IntegerField
from django.http import HttpRequest
from django.utils import formats, timezone
from django.utils.html import format_html, format_html_join
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from .. import rules
from ..notes import note_key

if TYPE_CHECKING:  # Django's admin classes take their model only in the stubs
    AnyModelAdmin = admin.ModelAdmin[Any]
else:
    AnyModelAdmin = admin.ModelAdmin

#: How an empty value looks in every list and form of this app's admin.
EMPTY = "—"


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


def username_field() -> str:
    """The lookup of the person's username, whatever the user model calls it."""
    return f"user__{get_user_model().USERNAME_FIELD}"


class OpsListMixin:
    """What every list of this app's admin shares: one look for empty values, and the count
    under the list in words with the right plural ("5 запусков оптимизатора")."""

    empty_value_display = EMPTY

    class Media:
        css = {"all": ("agent_memory/admin.css",)}

    @admin.display(description=_("person"), ordering="user")
    def person(self, obj: Any) -> str:
        return one_line(str(obj.user), "am-cut-short")

    def count_label(self, count: int) -> str:
        """``"5 memory notes"``: each admin says it with its own ``ngettext``."""
        raise NotImplementedError


class SearchByPersonMixin:
    """Admin search by the person's username (whatever the user model calls it), plus the
    fields in ``search_by``."""

    search_by: tuple[str, ...] = ()

    def get_search_fields(self, request: HttpRequest) -> tuple[str, ...]:
        return (*self.search_by, username_field())


class ReadOnlyAdmin(OpsListMixin, AnyModelAdmin):
    """Records the app writes; ops read them."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


def group_label(index: Any) -> str:
    """ "Group 1" for the first proposed group (stored 0-based, shown 1-based everywhere)."""
    return gettext("Group %(number)s") % {"number": int(index or 0) + 1}


def when(value: Any, short: str = "SHORT_DATETIME_FORMAT") -> str:
    """A date (and time) short enough for a list column; the full one is its tooltip."""
    if value is None:
        return EMPTY
    local = timezone.localtime(value) if timezone.is_aware(value) else value
    return format_html(
        '<span style="white-space: nowrap" title="{}">{}</span>',
        formats.date_format(local, "DATETIME_FORMAT"),
        formats.date_format(local, short),
    )


def one_line(text: str, css_class: str = "am-cut") -> str:
    """Text on one line, cut with "…" where its column ends (``admin.css``); the full text is
    its tooltip."""
    if not text:
        return EMPTY
    return format_html('<span class="{}" title="{}">{}</span>', css_class, text, text)


def pretty_json(value: Any) -> str:
    """A stored JSON value, indented, for digging deeper than the tables around it."""
    return format_html(
        '<pre style="white-space: pre-wrap; margin: 0">{}</pre>',
        json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True),
    )


def bullet_list(rows: Any, row_format: str) -> str:
    """``rows`` (tuples of values) as a compact list, each row through ``row_format``."""
    return format_html(
        "<ul style='margin: 0; padding-left: 1.2em'>{}</ul>",
        format_html_join("", row_format, rows),
    )


def group_list(items: list[dict[str, Any]]) -> str:
    """Groups as "Group 2: memory:4, memory:5 → memory:9", one a line."""
    if not items:
        return EMPTY
    return bullet_list(
        (
            (
                group_label(item.get("index", 0)),
                ", ".join(note_key(int(i)) for i in item.get("source_ids", [])),
                note_key(int(item["merged_id"])) if item.get("merged_id") else EMPTY,
            )
            for item in items
        ),
        "<li><strong>{}</strong>: {} → <code>{}</code></li>",
    )


__all__ = [
    "EMPTY",
    "OpsListMixin",
    "ReadOnlyAdmin",
    "SearchByPersonMixin",
    "StrictIdMixin",
    "bullet_list",
    "group_label",
    "group_list",
    "one_line",
    "pretty_json",
    "username_field",
    "when",
]
