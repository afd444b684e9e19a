"""The MCP endpoint: ``path("mcp/", include("agent_memory.mcp.urls"))``."""

from __future__ import annotations

from django.urls import path

from . import views

app_name = "agent_memory_mcp"

urlpatterns = [path("", views.endpoint, name="endpoint")]
