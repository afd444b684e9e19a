"""The memory screen: ``path("memory/", include("agent_memory.screen.urls"))``.

Addresses carry note ids only, never note text.
"""

from __future__ import annotations

from django.urls import path

from . import views

app_name = "agent_memory_screen"

urlpatterns = [
    path("", views.screen, name="screen"),
    path("notes/<int:note_id>/edit", views.edit, name="edit"),
    path("notes/<int:note_id>/row", views.row, name="row"),
    path("notes/<int:note_id>/delete", views.delete, name="delete"),
    path("erase", views.erase, name="erase"),
    path("export", views.export, name="export"),
    path("import", views.import_notes, name="import"),
    path("merges/<str:run_id>/revert", views.revert, name="revert"),
]
