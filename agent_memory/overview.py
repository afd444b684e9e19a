"""What a person's memory looks like, as the screen, the API and admin show it.

Plain values :class:`~agent_memory.LongTermMemory` answers with (``overview``, ``merges``), so no
view counts notes, splits the block or parses dates back on its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from .conf import Limits
from .notes import Note


@dataclass(frozen=True)
class Overview:
    """The person's notes, newest first, with their counts against the limits and the split of
    the agent's memory block: the notes past ``MAX_BLOCK_CHARS`` are hidden (found by search)."""

    notes: tuple[Note, ...]
    hidden_keys: frozenset[str]
    limits: Limits

    @property
    def total(self) -> int:
        """How many notes the person has."""
        return len(self.notes)

    @property
    def limit(self) -> int:
        """``MAX_NOTES``: how many notes the person may have."""
        return self.limits.max_notes

    @property
    def shown(self) -> int:
        """How many notes fit in the agent's block."""
        return self.total - len(self.hidden_keys)

    @property
    def chars(self) -> int:
        """Characters over all the person's notes."""
        return sum(len(note.content) for note in self.notes)

    @property
    def max_chars(self) -> int:
        """``MAX_TOTAL_CHARS``: how many characters the notes may hold together."""
        return self.limits.max_total_chars


@dataclass(frozen=True)
class MergedGroup:
    """One applied group of a merge run that can still be reverted."""

    group: int
    merged: Note
    sources: tuple[Note, ...]


@dataclass(frozen=True)
class RevertableMerge:
    """A merge run whose groups can still be reverted (all of them, or one by its number)."""

    id: int
    finished_at: datetime
    groups: tuple[MergedGroup, ...]

    @property
    def merged_ids(self) -> frozenset[int]:
        """The ids of the notes this run merged into."""
        return frozenset(group.merged.id for group in self.groups)

    @property
    def group_keys(self) -> tuple[str, ...]:
        """Each group's number as text, as the screen's Revert forms send it."""
        return tuple(str(group.group) for group in self.groups)


__all__ = ["MergedGroup", "Overview", "RevertableMerge"]
