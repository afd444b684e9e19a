"""The load benchmark's floor: a minimal DRF API over the same table, one ORM statement a request.

It answers the load clients' requests in the same shapes as the app's HTTP API (list, create,
update with a version, delete with a version) with the host's authentication, but checks
nothing: no validation, no per-person lock, no limits, no duplicates. Served by the same
gunicorn as the app (``benchmarks.floor_settings`` adds it to the example project's URLs) so
throughput and latency of the two can be set side by side.
"""

from __future__ import annotations

from typing import Any

from django.db.models import F
from django.urls import include, path
from django.utils import timezone
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agent_memory.models import MemoryNote

BASE = "/floor/memory"


def _as_dict(note_id: int, version: int, categories: Any, content: str, at: Any) -> dict:
    return {
        "id": note_id,
        "version": version,
        "categories": categories,
        "content": content,
        "updated_at": at.isoformat(),
    }


def _stale() -> Response:
    message = "The note was changed or deleted elsewhere."
    return Response({"error": {"kind": "stale_version", "message": message}}, status=409)


class FloorNotes(APIView):
    permission_classes = [IsAuthenticated]

    def get(self, request: Request) -> Response:
        rows = MemoryNote.objects.filter(user_id=request.user.pk).order_by("-updated_at", "-id")
        fields = ("pk", "version", "categories", "content", "updated_at")
        return Response({"notes": [_as_dict(*row) for row in rows.values_list(*fields)]})

    def post(self, request: Request) -> Response:
        data = request.data
        row = MemoryNote.objects.create(
            user_id=request.user.pk,
            categories=data["categories"],
            content=data["content"],
            source="person",
        )
        note = _as_dict(row.pk, row.version, row.categories, row.content, row.updated_at)
        return Response({"note": note}, status=201)


class FloorNote(APIView):
    permission_classes = [IsAuthenticated]

    def patch(self, request: Request, note_id: int) -> Response:
        data, now = request.data, timezone.now()
        version = int(data["version"])
        changed = MemoryNote.objects.filter(
            pk=note_id, user_id=request.user.pk, version=version
        ).update(
            categories=data["categories"],
            content=data["content"],
            version=F("version") + 1,
            updated_at=now,
        )
        if not changed:
            return _stale()
        note = _as_dict(note_id, version + 1, data["categories"], data["content"], now)
        return Response({"note": note})

    def delete(self, request: Request, note_id: int) -> Response:
        version = int(request.query_params["version"])
        deleted, _ = MemoryNote.objects.filter(
            pk=note_id, user_id=request.user.pk, version=version
        ).delete()
        return Response(status=204) if deleted else _stale()


urlpatterns = [
    path(BASE.strip("/"), FloorNotes.as_view()),
    path(BASE.strip("/") + "/<int:note_id>", FloorNote.as_view()),
    path("", include("example_project.urls")),
]
