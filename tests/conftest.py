from __future__ import annotations

import itertools

import pytest
from django.contrib.auth import get_user_model
from django.utils import translation

_names = itertools.count(1)


@pytest.fixture(autouse=True)
def _no_language_left_active():
    """A request in Russian leaves its language active in the thread; start each test clean."""
    yield
    translation.deactivate()


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
