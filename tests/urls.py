"""The URLs of the app's tests: what a host project mounts (the admin, the memory screen, the
HTTP API and the MCP endpoint) plus sign-in and the language switch the host's pages use.

The prefixes are the ones the README shows; the example project mounts the same ones around its
chat (``example_project/urls.py``), whose tests are beside it (``example_project/tests/``).
"""

from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/chat/", include("agent_memory.api.urls")),
    path("memory/", include("agent_memory.screen.urls")),
    path("mcp/", include("agent_memory.mcp.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("i18n/", include("django.conf.urls.i18n")),
]
