"""Django admin for ops staff: notes, optimizer runs, merge snapshots, optimizer state and
access tokens. Importing this package registers every admin (Django's autodiscovery does).

Edits of notes go through the site's :class:`~agent_memory.memory.LongTermMemory` with
``source="admin"``: the same validation, limits, duplicates, versions, history and signals as
the agent and the person; a write that breaks a rule is refused on the form with the rule's own
message. Runs and snapshots are read-only; reverting them goes through the same memory.
"""

from __future__ import annotations

from .notes import MemoryNoteAdmin
from .runs import MergedNoteSnapshotAdmin, MergeRunAdmin
from .state import OptimizerStateAdmin
from .tokens import MemoryAccessTokenAdmin

__all__ = [
    "MemoryAccessTokenAdmin",
    "MemoryNoteAdmin",
    "MergeRunAdmin",
    "MergedNoteSnapshotAdmin",
    "OptimizerStateAdmin",
]
