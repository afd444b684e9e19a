"""``LongTermMemory``: the app's front door for code; every read and write goes through it.

It only composes, one module per job: :mod:`.notes` reads and writes the notes on the store
(:mod:`~agent_memory.rules` cleans and checks what is written), :mod:`.turns` speaks to the
model (the tool and the prompt), :mod:`.transfer` exports and imports, and :mod:`.merges` hands
runs to the :class:`~agent_memory.optimizer.runner.Optimizer`. Nothing in the package imports
this package back.
"""

from __future__ import annotations

from typing import Any

from .. import prompt
from ..conf import build_store
from ..errors import MemoryStorageNotSupportedError
from ..names import TOOL_NAME
from ..optimizer.runner import Optimizer
from ..stores.base import BaseStore
from .merges import MergeMemory
from .notes import UNSET as _UNSET
from .transfer import TransferMemory
from .turns import TurnMemory


class LongTermMemory(TurnMemory, TransferMemory, MergeMemory):
    """Long-term memory of the people an agent talks to.

    ``store`` keeps the notes: an instance of a subclass of
    :class:`~agent_memory.stores.base.BaseStore` (default: the store ``AGENT_MEMORY["STORE"]``
    configures, :class:`~agent_memory.stores.orm.DjangoStore` unless set); anything else is
    :class:`~agent_memory.errors.MemoryStorageNotSupportedError`.
    ``optimizer``: unset → on when the store can merge; a dict → on with these options over
    ``AGENT_MEMORY["OPTIMIZER"]`` for this object's own calls (the django-q2 tasks and
    ``memory_optimize`` use the settings alone: nothing is stored per person); ``False`` → off.
    """

    tool_name = TOOL_NAME
    service_blocks: tuple[str, ...] = prompt.SERVICE_BLOCKS

    def __init__(self, store: Any = None, optimizer: Any = _UNSET) -> None:
        if store is None:
            store = build_store()
        if not isinstance(store, BaseStore):
            raise MemoryStorageNotSupportedError.not_a_store(store)
        self._store = store
        self._optimizer = Optimizer(store, self._resolve_optimizer(store, optimizer))


__all__ = ["TOOL_NAME", "LongTermMemory"]
