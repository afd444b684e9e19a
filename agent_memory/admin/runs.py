"""Admin of the optimizer's records: merge runs and the snapshots of their merged groups.

Both are read-only; the one change staff make is reverting a run or some of its groups
(:mod:`~agent_memory.admin.reverts`). A run's page puts each rejected group beside the texts of
the notes it names, and lists its groups still applied apart from those reverted.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html, format_html_join
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from ..forms import join_categories
from ..models import MemoryNote, MergedNoteSnapshot, MergeRun
from ..notes import note_key
from ..optimizer.reasons import translate_reason
from .display import (
    EMPTY,
    ReadOnlyAdmin,
    SearchByPersonMixin,
    StrictIdMixin,
    bullet_list,
    group_label,
    group_list,
    pretty_json,
    when,
)
from .reverts import revert_in_admin


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
        return when(obj.started_at)

    # Not named "reverted": the admin would show the model's field of that name instead.
    @admin.display(description=_("reverted"), ordering="reverted_at")
    def reverted_on(self, obj: MergeRun) -> str:
        left = len(_still_applied(obj))
        if obj.reverted_at is None or not left:
            return when(obj.reverted_at, "SHORT_DATE_FORMAT")
        # Some groups reverted, others still applied: not "Reverted" as a whole.
        reverted = len(_reverted_indexes(obj))
        return format_html(
            "{} {}",
            when(obj.reverted_at, "SHORT_DATE_FORMAT"),
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
        return bullet_list(
            (
                (
                    note_key(int(i)),
                    texts.get(int(i)) if int(i) in texts else format_html("<em>({})</em>", gone),
                )
                for i in ids
            ),
            "<li><code>{}</code> {}</li>",
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
        return group_list(_still_applied(obj))

    @admin.display(description=_("reverted groups (kept apart)"))
    def reverted_groups(self, obj: MergeRun) -> str:
        return group_list([item for item in obj.reverted or [] if isinstance(item, dict)])

    @admin.display(description=_("proposals"))
    def proposed_groups(self, obj: MergeRun) -> str:
        """The model's answer as stored, for digging deeper than the table above."""
        return format_html(
            "<details><summary>{}</summary>{}</details>",
            gettext("Show as stored (JSON)"),
            pretty_json(obj.proposals or {}),
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
        return when(obj.created_at)

    @admin.display(description=_("merged note"), ordering="merged_note_id")
    def merged_key(self, obj: MergedNoteSnapshot) -> str:
        return note_key(obj.merged_note_id)

    @admin.display(description=_("source notes"))
    def source_notes(self, obj: MergedNoteSnapshot) -> str:
        notes = (obj.sources or {}).get("notes") or []
        if not notes:
            return EMPTY
        return bullet_list(
            (
                (
                    note_key(int(note.get("id", 0))),
                    join_categories(note.get("categories") or []) or EMPTY,
                    note.get("content") or EMPTY,
                )
                for note in notes
                if isinstance(note, dict)
            ),
            "<li><code>{}</code> <small>{}</small><br>{}</li>",
        )


__all__ = ["MergeRunAdmin", "MergedNoteSnapshotAdmin"]
