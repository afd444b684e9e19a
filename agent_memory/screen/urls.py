"""The memory screen: ``path("memory/", include("agent_memory.screen.urls"))``.

Addresses carry note ids only, never note text.
"""

from __future__ import annotations

from django.urls import path

from .. import converters  # noqa: F401  (registers <memory_id:…>)
from . import connected, merges, transfer, views

app_name = "agent_memory_screen"

urlpatterns = [
    path("", views.screen, name="screen"),
    path("notes/<memory_id:note_id>/edit", views.edit, name="edit"),
    path("notes/<memory_id:note_id>/row", views.row, name="row"),
    path("notes/<memory_id:note_id>/delete", views.delete, name="delete"),
    path("notes/<memory_id:note_id>/pin", views.pin, name="pin"),
    path("switch", views.switch, name="switch"),
    path("notes/<memory_id:note_id>/undo", views.undo, name="undo"),
    path("erase", views.erase, name="erase"),
    path("export", transfer.export, name="export"),
    path("import", transfer.import_notes, name="import"),
    path("merges/<memory_id:run_id>/revert", merges.revert, name="revert"),
    path("merges/<memory_id:run_id>/groups/<int:group>", merges.merge_group, name="merge_group"),
    path("apps/new", connected.create, name="create_token"),
    path("apps/<memory_id:token_id>/revoke", connected.revoke, name="revoke_token"),
]
