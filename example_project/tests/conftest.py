"""The example project's tests share the fixtures and hooks of the app's tests
(``tests/conftest.py``, and ``tests/browser/conftest.py`` for the browser tests here)."""

from __future__ import annotations

from typing import Any

import pytest

from tests import conftest as app
from tests.browser import conftest as browsers
from tests.conftest import (  # noqa: F401
    _no_language_left_active,
    _no_vectors_kept_from_another_test,
    _record_use_of_the_default_embeddings,
    api,
    demo_agent,
    make_user,
    memory,
    memory_on_each_store,
    other_user,
    people,
    person,
    user,
)

pytest_configure = app.pytest_configure


def pytest_collection_modifyitems(config: Any, items: list[pytest.Item]) -> None:
    browsers.pytest_collection_modifyitems(items)
    app.pytest_collection_modifyitems(config, items)
