"""The store contract test-suite: what every store must do, for any store to run.

Subclass :class:`StoreContract` (and :class:`MergeStoreContract` for a store that merges) in a
pytest module and provide two fixtures::

    from agent_memory.testing import MergeStoreContract, StoreContract

    class TestMyStore(StoreContract):
        @pytest.fixture
        def store(self, db):
            return MyStore()

        @pytest.fixture
        def people(self, django_user_model):
            make = django_user_model.objects.create_user
            return make("ann").pk, make("bob").pk

The store is a :class:`~agent_memory.stores.base.BaseStore`: one that writes only the five note
methods passes :class:`StoreContract` on the base's defaults; :class:`MergeStoreContract` is
skipped for a store that cannot merge (``can_merge``). Requires pytest.
"""

from .merges import MergeStoreContract
from .notes import StoreContract, new

__all__ = ["MergeStoreContract", "StoreContract", "new"]
