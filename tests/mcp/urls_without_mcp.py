"""The tests' URLs without the MCP endpoint."""

from tests.urls import urlpatterns as everything

urlpatterns = [pattern for pattern in everything if "mcp" not in str(pattern.pattern)]
