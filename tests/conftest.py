from __future__ import annotations

import itertools
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.utils import translation

from agent_memory import LongTermMemory
from agent_memory.stores.in_memory import InMemoryStore
from agent_memory.stores.orm import DjangoStore

_names = itertools.count(1)


@pytest.fixture(autouse=True)
def _no_language_left_active():
    """A request in Russian leaves its language active in the thread; start each test clean."""
    yield
    translation.deactivate()


@pytest.fixture(autouse=True)
def _no_vectors_kept_from_another_test():
    """Search keeps people's vector matrices per process, by note ids and texts; ids repeat from
    one test's database to the next, so each test starts without them."""
    from agent_memory.embeddings import forget_matrices

    forget_matrices()


@pytest.fixture
def make_user(db):
    """Create a person with a unique username."""

    def make(username: str | None = None):
        return get_user_model().objects.create_user(
            username=username or f"person{next(_names)}", password="pw-for-tests"
        )

    return make


@pytest.fixture
def user(make_user):
    return make_user()


@pytest.fixture
def other_user(make_user):
    return make_user()


@pytest.fixture
def api(user):
    """A DRF test client logged in as ``user``."""
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_login(user)
    return client


@pytest.fixture(params=[pytest.param("django", marks=pytest.mark.django_db), "in_memory"])
def memory(request):
    """``LongTermMemory`` on the ORM store (SQLite or PostgreSQL) and on the in-memory store."""
    if request.param == "django":
        return LongTermMemory(store=DjangoStore())
    return LongTermMemory(store=InMemoryStore())


@pytest.fixture
def people(request, memory) -> tuple[Any, Any]:
    """Two persons for ``memory``'s store: saved users for the ORM store, plain ids otherwise."""
    if isinstance(memory.store, DjangoStore):
        make_user = request.getfixturevalue("make_user")
        return make_user(), make_user()
    return 1, 2


@pytest.fixture
def person(people):
    return people[0]


@pytest.fixture
def demo_agent(settings):
    """The example's offline demo agent, even if OPENAI_BASE_URL is set in the shell running the
    tests (``pytestmark = pytest.mark.usefixtures("demo_agent")``)."""
    settings.AGENT_MEMORY = {
        **settings.AGENT_MEMORY,
        "MODELS": {"default": {"BACKEND": "example_project.chat.demo_agent.DemoAgent"}},
    }


def pytest_configure(config: Any) -> None:
    """``AGENT_MEMORY_TEST_EMBEDDINGS=off`` runs the tests with ``EMBEDDINGS=False`` by default
    (word stems only), so the suite can be run both ways."""
    import os

    if os.environ.get("AGENT_MEMORY_TEST_EMBEDDINGS", "on").lower() in ("off", "0", "false"):
        from agent_memory.conf import DEFAULTS

        DEFAULTS["EMBEDDINGS"] = False
