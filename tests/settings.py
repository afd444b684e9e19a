"""Settings of the app's tests, complete in themselves: the app, DRF and django-q2 with URLs
(``tests/urls.py``) and a host page (``tests/templates/base.html``) of their own, on SQLite
unless ``DATABASE_URL`` is set.

Nothing of the example project is installed: the app is tested the way a host project mounts
it. The example's own tests (``example_project/tests/``) run on ``example_project.tests.settings``,
these settings plus the example's chat app, URLs, templates and catalogue.

The SQLite test database is a file, not ``:memory:``, so that tests can race real OS processes
against it. ``AGENT_MEMORY_TEST_DB`` points child processes at the test database by name. Each
test run gets test databases of its own (named after its process id), so two runs on one
machine never drop each other's database.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import dj_database_url

BASE_DIR = Path(__file__).resolve().parent.parent

SECRET_KEY = "agent-memory-tests-not-for-production"
DEBUG = True
ALLOWED_HOSTS = ["localhost", "127.0.0.1", "[::1]"]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "django_q",
    "agent_memory",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "tests.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "tests" / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

_run = os.getpid()
_url = os.environ.get("DATABASE_URL")
DATABASES: dict[str, dict[str, Any]]
if _url:
    DATABASES = {"default": dict(dj_database_url.parse(_url))}
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

LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("ru", "Русский")]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/memory/"
LOGOUT_REDIRECT_URL = "/accounts/login/"

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_AUTHENTICATION_CLASSES": ["rest_framework.authentication.SessionAuthentication"],
}

SPECTACULAR_SETTINGS = {
    "TITLE": "django-agent-memory example",
    "DESCRIPTION": "The memory API of the example project.",
    "VERSION": "0.1.0",
}

# The example chat runs on its offline demo agent, whatever model the shell's environment names.
CHAT_MODEL_CONFIG = {"BACKEND": "example_project.chat.demo_agent.DemoAgent", "OPTIONS": {}}
CHAT_MODEL = "default"

AGENT_MEMORY: dict[str, Any] = {
    "MODELS": {"default": CHAT_MODEL_CONFIG},
    # The fast deterministic backend of tests/fake_embeddings.py (hashed stems, trigrams and a
    # small thesaurus), or word stems only with AGENT_MEMORY_TEST_EMBEDDINGS=off. The real
    # models are tested in tests/test_models.py (``-m models``).
    "EMBEDDINGS": (
        False
        if os.environ.get("AGENT_MEMORY_TEST_EMBEDDINGS", "on").lower() in ("off", "0", "false")
        else {"BACKEND": "tests.fake_embeddings.StemEmbeddings", "OPTIONS": {}}
    ),
    "BASE_TEMPLATE": "base.html",
}

# django-q2 on its ORM broker, run in the calling process (tests need no cluster).
Q_CLUSTER = {
    "name": "agent_memory_tests",
    "workers": 2,
    "timeout": 120,
    "retry": 180,
    "catch_up": False,
    "orm": "default",
    "sync": True,
}

LOGGING = {"version": 1, "disable_existing_loggers": False}
