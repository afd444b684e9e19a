"""Settings for the in-process benchmarks: the example project's, on throwaway databases.

``AGENT_MEMORY_BENCH_SQLITE`` names the SQLite file (alias ``default``) and
``AGENT_MEMORY_BENCH_POSTGRES`` the PostgreSQL URL (alias ``postgresql``) and
``AGENT_MEMORY_BENCH_REFERENCE`` a second PostgreSQL database (alias ``reference``: the small
site ``scale`` measures beside the growing one); all are created and removed by
:mod:`benchmarks.environment`.
"""

from __future__ import annotations

import os

import dj_database_url

from example_project.settings import *  # noqa: F403

DEBUG = False  # DEBUG records every query, which would be measured too

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.environ.get("AGENT_MEMORY_BENCH_SQLITE", ":memory:"),
        "OPTIONS": {"timeout": 30},
    }
}
if os.environ.get("AGENT_MEMORY_BENCH_POSTGRES"):
    DATABASES["postgresql"] = dj_database_url.parse(os.environ["AGENT_MEMORY_BENCH_POSTGRES"])
if os.environ.get("AGENT_MEMORY_BENCH_REFERENCE"):
    DATABASES["reference"] = dj_database_url.parse(os.environ["AGENT_MEMORY_BENCH_REFERENCE"])

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
AGENT_MEMORY: dict = {"OPTIMIZER": False}
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "loggers": {"agent_memory": {"level": "WARNING"}},
}
