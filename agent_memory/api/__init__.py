"""The HTTP API (Django REST framework): ``include("agent_memory.api.urls")``."""
