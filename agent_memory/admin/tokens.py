"""Admin of the people's access tokens for MCP clients: listed, and revocable in bulk."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from ..models import MemoryAccessToken
from .display import AnyModelAdmin, OpsListMixin, SearchByPersonMixin, StrictIdMixin, when


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
        return when(obj.created_at)

    @admin.display(description=_("last used"), ordering="last_used_at")
    def last_used(self, obj: MemoryAccessToken) -> str:
        return when(obj.last_used_at)

    @admin.display(description=_("revoked"), ordering="revoked_at")
    def revoked(self, obj: MemoryAccessToken) -> str:
        return when(obj.revoked_at)

    @admin.action(description=_("Revoke the selected tokens"), permissions=["delete"])
    def revoke(self, request: HttpRequest, queryset: QuerySet[MemoryAccessToken]) -> None:
        count = queryset.filter(revoked_at=None).update(revoked_at=timezone.now())
        self.message_user(
            request,
            ngettext("%(count)d token revoked.", "%(count)d tokens revoked.", count)
            % {"count": count},
            messages.SUCCESS,
        )


__all__ = ["MemoryAccessTokenAdmin"]
