"""The memory screen's tests: the configured memory, and the person logged in on ``client``."""

from __future__ import annotations

import pytest

from agent_memory import LongTermMemory


@pytest.fixture
def memory():
    """The memory of the configured store, the one the screen serves."""
    return LongTermMemory()


@pytest.fixture
def person(client, user):
    """The person whose screen it is, logged in on ``client``."""
    client.force_login(user)
    return user
