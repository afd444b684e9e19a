"""Admin of the optimizer's state per person: when each person's next run is due, and the
backoff after failures, which staff can reset."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from ..models import OptimizerState
from .display import EMPTY, OpsListMixin, SearchByPersonMixin, StrictIdMixin, when

if TYPE_CHECKING:  # Django's admin classes take their model only in the stubs
    StateModelAdmin = admin.ModelAdmin[OptimizerState]
else:
    StateModelAdmin = admin.ModelAdmin


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
        return when(obj.next_run_at)

    @admin.display(description=_("last success"), ordering="last_success_at")
    def last_success(self, obj: OptimizerState) -> str:
        return when(obj.last_success_at)

    @admin.display(description=_("last activity"), ordering="last_activity_at")
    def last_activity(self, obj: OptimizerState) -> str:
        return when(obj.last_activity_at)

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


__all__ = ["OptimizerStateAdmin"]
