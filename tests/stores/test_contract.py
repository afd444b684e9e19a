"""The store contract suites (notes, and merges), run against every store we ship."""

from __future__ import annotations

import pytest

from agent_memory.stores.in_memory import InMemoryStore
from agent_memory.stores.orm import DjangoStore
from agent_memory.testing import MergeStoreContract, StoreContract

from .five_methods import FiveMethodStore


class OnDjangoStore:
    @pytest.fixture
    def store(self, db):
        return DjangoStore()

    @pytest.fixture
    def people(self, make_user):
        return make_user().pk, make_user().pk


class OnInMemoryStore:
    @pytest.fixture
    def store(self):
        return InMemoryStore()

    @pytest.fixture
    def people(self):
        return 1, 2


class TestDjangoStore(OnDjangoStore, StoreContract):
    pass


class TestInMemoryStore(OnInMemoryStore, StoreContract):
    pass


class TestDjangoStoreMerges(OnDjangoStore, MergeStoreContract):
    pass


class TestInMemoryStoreMerges(OnInMemoryStore, MergeStoreContract):
    pass


class OnFiveMethodStore:
    """The base's defaults, on a store that writes only the five note methods."""

    @pytest.fixture
    def store(self):
        return FiveMethodStore()

    @pytest.fixture
    def people(self):
        return 1, 2


class TestFiveMethodStore(OnFiveMethodStore, StoreContract):
    pass


class TestFiveMethodStoreMerges(OnFiveMethodStore, MergeStoreContract):
    """Skipped as a whole: a store without ``_merge_notes`` cannot merge."""
