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
    path("", include("example_project.chat.urls")),
]
