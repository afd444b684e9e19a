"""Test settings: the example project's, on SQLite unless ``DATABASE_URL`` is set.

The SQLite test database is a file, not ``:memory:``, so that tests can race real OS processes
against it. ``AGENT_MEMORY_TEST_DB`` points child processes at the test database by name. Each
test run gets test databases of its own (named after its process id), so two runs on one
machine never drop each other's database.
"""

from __future__ import annotations

import os
import tempfile

import dj_database_url

from example_project.settings import *  # noqa: F403

_run = os.getpid()
_url = os.environ.get("DATABASE_URL")
if _url:
    DATABASES = {"default": dj_database_url.parse(_url)}
    DATABASES["default"]["TEST"] = {"NAME": f"test_agent_memory_{_run}"}
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": os.path.join(tempfile.gettempdir(), "agent_memory_dev.sqlite3"),
            "OPTIONS": {"timeout": 30},
            "TEST": {
                "NAME": os.path.join(tempfile.gettempdir(), f"agent_memory_tests_{_run}.sqlite3")
            },
        }
    }

if os.environ.get("AGENT_MEMORY_TEST_DB"):
    # A child process of a test: use the test database the parent created.
    DATABASES["default"]["NAME"] = os.environ["AGENT_MEMORY_TEST_DB"]

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
Q_CLUSTER = {**Q_CLUSTER, "sync": True}  # noqa: F405
LOGGING = {"version": 1, "disable_existing_loggers": False}
