"""``include("agent_memory.api.urls")`` at any base, e.g. ``path("api/chat/", include(...))``.

``{base}/memory`` (GET list, POST add, DELETE erase all), ``{base}/memory/<id>`` (PATCH, DELETE),
``{base}/memory/<id>/history`` (GET), ``{base}/memory/merges`` (GET) and
``{base}/memory/merges/<run_id>/revert`` (POST).
"""

from __future__ import annotations

from django.urls import re_path
from rest_framework.routers import Route, SimpleRouter

from .views import MemoryViewSet, UnknownAddressView


class MemoryRouter(SimpleRouter):
    """A ``SimpleRouter`` whose list route maps GET to ``notes`` (one object, not a list: the notes
    and their counts) and DELETE to ``clear`` (erase all)."""

    routes = [
        route._replace(mapping={"get": "notes", "post": "create", "delete": "clear"})
        if isinstance(route, Route) and route.name == "{basename}-list"
        else route
        for route in SimpleRouter.routes
    ]


app_name = "agent_memory_api"

router = MemoryRouter(trailing_slash=False)
router.register("memory", MemoryViewSet, basename="memory")

urlpatterns = [
    *router.urls,
    # Last: any other address under memory/ answers in the API's JSON shape, never HTML.
    re_path(r"^memory(?:/.*)?$", UnknownAddressView.as_view(), name="memory-unknown"),
]
