from __future__ import annotations

import itertools
import os
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
def _record_use_of_the_default_embeddings(request):
    """With ``AGENT_MEMORY_TEST_RECORD_EMBEDDINGS=<file>``, append the id of each test that
    embedded with the default test backend: exactly the tests whose behaviour can branch on
    ``EMBEDDINGS`` (the others never reach it, or set it themselves). ``.ci/run`` runs them
    again with ``AGENT_MEMORY_TEST_EMBEDDINGS=off`` (word stems only)."""
    from . import fake_embeddings

    fake_embeddings.USED.clear()
    yield
    record = os.environ.get("AGENT_MEMORY_TEST_RECORD_EMBEDDINGS")
    if record and fake_embeddings.USED:
        with open(record, "a", encoding="utf-8") as file:
            file.write(request.node.nodeid + "\n")


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
def ops(client, db):
    """A superuser, logged in on ``client``: staff working in admin."""
    staff = get_user_model().objects.create_superuser("ops", "ops@example.com", "pw-for-tests")
    client.force_login(staff)
    return staff


@pytest.fixture
def ann(make_user):
    """A person named ``ann``, for pages that show or search people by name."""
    return make_user("ann")


@pytest.fixture
def bob(make_user):
    """A person named ``bob``, beside ``ann``."""
    return make_user("bob")


@pytest.fixture
def api(user):
    """A DRF test client logged in as ``user``."""
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_login(user)
    return client


@pytest.fixture(params=[pytest.param("django", marks=pytest.mark.django_db)])
def memory(request):
    """``LongTermMemory`` on the ORM store (SQLite or PostgreSQL).

    One store only: the store contract suites (``tests/stores/``) hold both stores to the same
    behaviour, so the core tests need not repeat on the in-memory store. A test about the
    in-memory store's own behaviour builds ``LongTermMemory(store=InMemoryStore())`` itself, or
    uses ``memory_on_each_store``."""
    return LongTermMemory(store=DjangoStore())


@pytest.fixture(params=[pytest.param("django", marks=pytest.mark.django_db), "in_memory"])
def memory_on_each_store(request):
    """``LongTermMemory`` on the ORM store and on the in-memory store, for a test about where
    the two could differ."""
    if request.param == "django":
        return LongTermMemory(store=DjangoStore())
    return LongTermMemory(store=InMemoryStore())


@pytest.fixture
def people(request, memory) -> tuple[Any, Any]:
    """Two persons for the test's memory (``memory``, or ``memory_on_each_store`` when the test
    uses it): saved users for the ORM store, plain ids otherwise."""
    if "memory_on_each_store" in request.fixturenames:
        memory = request.getfixturevalue("memory_on_each_store")
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
    """The tests' embedding backend (``tests/settings.py``: the fast backend of
    ``tests/fake_embeddings.py``, or ``EMBEDDINGS=False``, word stems only, with
    ``AGENT_MEMORY_TEST_EMBEDDINGS=off``) stays in force when a test replaces
    ``settings.AGENT_MEMORY`` whole without naming ``EMBEDDINGS``, so the tests that branch on it
    can be run both ways (``-m embeddings``). A test that wants another backend names it."""
    from django.conf import settings
    from django.core.signals import setting_changed

    embeddings = settings.AGENT_MEMORY["EMBEDDINGS"]

    def keep_test_embeddings(setting: str = "", value: Any = None, enter: bool = False, **_: Any):
        if setting == "AGENT_MEMORY" and enter and isinstance(value, dict):
            value.setdefault("EMBEDDINGS", embeddings)

    setting_changed.connect(keep_test_embeddings, weak=False, dispatch_uid="tests.embeddings")


#: Fixtures that give a test the database (pytest-django's, and the suite's own that need it).
DATABASE_FIXTURES = frozenset({"db", "transactional_db", "django_db_setup", "live_server"})


def uses_database(item: pytest.Item) -> bool:
    """Whether a test touches the test database (by marker or through any fixture it uses)."""
    if item.get_closest_marker("django_db") is not None:
        return True
    return bool(DATABASE_FIXTURES & set(getattr(item, "fixturenames", ())))


def pytest_collection_modifyitems(config: Any, items: list[pytest.Item]) -> None:
    """``AGENT_MEMORY_TEST_DATABASE_ONLY=1`` keeps only the tests that touch the database: the
    second database's run in ``.ci/run`` (the others ran on the first already)."""
    if os.environ.get("AGENT_MEMORY_TEST_DATABASE_ONLY") != "1":
        return
    kept = [item for item in items if uses_database(item)]
    if len(kept) < len(items):
        config.hook.pytest_deselected(items=[item for item in items if not uses_database(item)])
        items[:] = kept
