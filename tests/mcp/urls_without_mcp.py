"""The example project's URLs without the MCP endpoint."""

from example_project.urls import urlpatterns as example

urlpatterns = [pattern for pattern in example if "mcp" not in str(pattern.pattern)]
