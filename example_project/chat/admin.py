from __future__ import annotations

from django.contrib import admin

from .models import Chat, Message


class MessageInline(admin.TabularInline):
    model = Message
    fields = ("turn", "role", "content", "memory_reason", "failed")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True


@admin.register(Chat)
class ChatAdmin(admin.ModelAdmin):
    list_display = ["__str__", "user", "is_group", "updated_at"]
    list_filter = ["is_group"]
    search_fields = ["title", "user__username"]
    raw_id_fields = ["user"]
    inlines = [MessageInline]


@admin.register(Message)
class MessageAdmin(admin.ModelAdmin):
    list_display = ["chat", "turn", "role", "failed", "created_at"]
    list_filter = ["role", "failed"]
    raw_id_fields = ["chat"]
