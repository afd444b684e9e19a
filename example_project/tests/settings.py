"""Settings of the example project's tests: the app's test settings (``tests/settings.py``:
the same databases, embeddings and django-q2 in the calling process) plus what the example
adds, its chat app, URLs, templates and catalogue, and chats linked from the notes they wrote.

Run them with ``python -m pytest example_project --ds=example_project.tests.settings``.
"""

from __future__ import annotations

from tests.settings import *  # noqa: F403

INSTALLED_APPS = [*INSTALLED_APPS, "example_project.chat"]  # noqa: F405
ROOT_URLCONF = "example_project.urls"
TEMPLATES[0]["DIRS"] = [BASE_DIR / "example_project" / "templates"]  # noqa: F405
WSGI_APPLICATION = "example_project.wsgi.application"
LOCALE_PATHS = [BASE_DIR / "example_project" / "locale"]  # noqa: F405
LOGIN_REDIRECT_URL = "/"
AGENT_MEMORY = {**AGENT_MEMORY, "ORIGIN_URL": "example_project.chat.origins.chat_url"}  # noqa: F405
