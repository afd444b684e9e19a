"""Settings of the example project: SQLite by default, ``DATABASE_URL`` for PostgreSQL."""

from __future__ import annotations

import os
from pathlib import Path

import dj_database_url

BASE_DIR = Path(__file__).resolve().parent.parent

SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "example-project-not-for-production")
DEBUG = os.environ.get("DJANGO_DEBUG", "1") == "1"
ALLOWED_HOSTS = os.environ.get("DJANGO_ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]").split(",")

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
    "example_project.chat",
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

ROOT_URLCONF = "example_project.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "example_project" / "templates"],
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

WSGI_APPLICATION = "example_project.wsgi.application"

DATABASES = {
    "default": dj_database_url.config(
        default=f"sqlite:///{BASE_DIR / 'example.sqlite3'}",
        conn_max_age=60,
        conn_health_checks=True,  # a connection the database dropped is replaced, not reused
    )
}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # The web server and the django-q2 cluster share the file: wait for each other's writes.
    DATABASES["default"].setdefault("OPTIONS", {})["timeout"] = 20

LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("ru", "Русский")]
LOCALE_PATHS = [BASE_DIR / "example_project" / "locale"]  # the example's own strings
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/accounts/login/"

# Session auth only: the browser's cookie, CSRF-checked on every unsafe method. No HTTP Basic:
# browsers send cached Basic credentials to cross-site requests by themselves (see the README's
# "Authentication and CSRF"). Scripts use a header token (e.g. DRF's TokenAuthentication).
REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_AUTHENTICATION_CLASSES": ["rest_framework.authentication.SessionAuthentication"],
}

SPECTACULAR_SETTINGS = {
    "TITLE": "django-agent-memory example",
    "DESCRIPTION": "The memory API of the example project.",
    "VERSION": "0.1.0",
}

# The model that runs the chat and, with the same alias, the memory optimizer:
# OPENAI_BASE_URL set: any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp, ...);
# else ANTHROPIC_API_KEY set: Anthropic's Messages API; else the offline demo agent.
if os.environ.get("OPENAI_BASE_URL"):
    CHAT_MODEL_CONFIG = {
        "BACKEND": "example_project.chat.llm.OpenAICompatibleModel",
        "OPTIONS": {
            "base_url": os.environ["OPENAI_BASE_URL"],
            "api_key": os.environ.get("OPENAI_API_KEY", ""),
            "model": os.environ.get("OPENAI_MODEL", "gpt-5-mini"),
            "timeout": float(os.environ.get("OPENAI_TIMEOUT", "60")),
        },
    }
elif os.environ.get("ANTHROPIC_API_KEY"):
    CHAT_MODEL_CONFIG = {
        "BACKEND": "example_project.chat.llm.AnthropicModel",
        "OPTIONS": {
            "base_url": os.environ.get("ANTHROPIC_BASE_URL", "https://api.anthropic.com"),
            "api_key": os.environ["ANTHROPIC_API_KEY"],
            "model": os.environ.get("ANTHROPIC_MODEL", "claude-sonnet-4-6"),
            "timeout": float(os.environ.get("ANTHROPIC_TIMEOUT", "60")),
        },
    }
else:
    CHAT_MODEL_CONFIG = {"BACKEND": "example_project.chat.demo_agent.DemoAgent", "OPTIONS": {}}
CHAT_MODEL = "default"

AGENT_MEMORY: dict = {
    "MODELS": {"default": CHAT_MODEL_CONFIG},
    # Each note the agent saves links back to the chat it was saved in.
    "ORIGIN_URL": "example_project.chat.origins.chat_url",
    # The memory screen renders inside the site's page, so its navigation stays.
    "BASE_TEMPLATE": "base.html",
}

# django-q2: the ORM broker (the database is the queue) unless REDIS_URL names a Redis server
# (pip install "django-agent-memory[redis]"). Every web server and cluster must agree.
Q_CLUSTER = {
    "name": "agent_memory_example",
    "workers": 2,
    "timeout": 120,
    "retry": 180,
    "catch_up": False,
}
if os.environ.get("REDIS_URL"):
    Q_CLUSTER["redis"] = os.environ["REDIS_URL"]
else:
    Q_CLUSTER["orm"] = "default"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "loggers": {"agent_memory": {"handlers": ["console"], "level": "INFO"}},
}
