from __future__ import annotations

from django.urls import path

from . import views

app_name = "chat"

urlpatterns = [
    path("", views.home, name="home"),
    path("chats/new", views.new_chat, name="new"),
    path("chats/<int:pk>/", views.chat_detail, name="detail"),
    path("chats/<int:pk>/send", views.send, name="send"),
    path("chats/<int:pk>/edit-first", views.edit_first, name="edit_first"),
    path("chats/<int:pk>/regenerate-first", views.regenerate_first, name="regenerate_first"),
    path("chats/<int:pk>/compact", views.compact, name="compact"),
    path("chats/<int:pk>/group", views.group, name="group"),
    path("chats/<int:pk>/delete", views.delete_chat, name="delete"),
    path("chats/<int:pk>/memory-log.json", views.memory_log, name="memory_log"),
]
