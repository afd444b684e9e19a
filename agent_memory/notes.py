"""The note as the core sees it: a plain, immutable value independent of any store."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from .kinds import NoteSource

#: Every value a note's ``source`` can have.
SOURCES = tuple(NoteSource)


@dataclass(frozen=True)
class NewNote:
    """A note about to be written: already validated, not yet stored."""

    categories: tuple[str, ...]
    content: str
    source: NoteSource = NoteSource.AGENT
    #: Where the note was saved, as the host names it (e.g. ``chat:42``); ``""`` when unknown.
    origin: str = ""
    #: The person's standing rule, which the agent reads but cannot change. ``None``: as it is
    #: (an update keeps the note's own; a new note is not pinned).
    pinned: bool | None = None
    #: The moment the note stops holding, or ``None``.
    valid_until: datetime | None = None
    #: When the note was first written, if not now (an import keeps the file's dates).
    created_at: datetime | None = None


@dataclass(frozen=True)
class Note:
    """One stored note of one person."""

    id: int
    user_id: Any
    categories: tuple[str, ...]
    content: str
    version: int
    #: A :class:`~agent_memory.kinds.NoteSource` value, as stored.
    source: str
    created_at: datetime
    updated_at: datetime
    origin: str = ""
    #: Who wrote the first version (a :class:`~agent_memory.kinds.NoteSource` value).
    created_by: str = NoteSource.AGENT
    pinned: bool = False
    valid_until: datetime | None = None

    @property
    def key(self) -> str:
        """The name the model sees for this note: ``memory:<id>``."""
        return note_key(self.id)

    def updated_to(self, note: NewNote, now: datetime) -> Note:
        """This note after an update to ``note`` at ``now``: the next version."""
        return replace(
            self,
            categories=tuple(note.categories),
            content=note.content,
            source=note.source,
            origin=note.origin,
            pinned=self.pinned if note.pinned is None else note.pinned,
            valid_until=note.valid_until,
            version=self.version + 1,
            updated_at=now,
        )

    def as_dict(self) -> dict[str, Any]:
        """The note as the tool and the HTTP API answer it."""
        return {
            "id": self.id,
            "version": self.version,
            "categories": list(self.categories),
            "content": self.content,
            "updated_at": self.updated_at.isoformat(),
            "source": self.source,
            "pinned": self.pinned,
            "created_by": self.created_by,
            "valid_until": None if self.valid_until is None else self.valid_until.isoformat(),
        }

    def expired(self, now: datetime) -> bool:
        """Whether the note stopped holding at or before ``now``."""
        return self.valid_until is not None and self.valid_until <= now


@dataclass(frozen=True)
class NoteVersion:
    """An earlier version of a note, as :meth:`~agent_memory.LongTermMemory.history` gives it."""

    version: int
    categories: tuple[str, ...]
    content: str
    pinned: bool
    valid_until: datetime | None
    #: Who wrote this version (a :class:`~agent_memory.kinds.NoteSource` value).
    source: str
    #: When this version was written.
    changed_at: datetime

    @classmethod
    def of(cls, note: Note) -> NoteVersion:
        """``note`` as it is now, kept as an earlier version."""
        return cls(
            note.version,
            tuple(note.categories),
            note.content,
            note.pinned,
            note.valid_until,
            note.source,
            note.updated_at,
        )

    def as_dict(self) -> dict[str, Any]:
        """The version as the HTTP API answers it."""
        return {
            "version": self.version,
            "categories": list(self.categories),
            "content": self.content,
            "pinned": self.pinned,
            "valid_until": None if self.valid_until is None else self.valid_until.isoformat(),
            "source": self.source,
            "changed_at": self.changed_at.isoformat(),
        }


def note_key(note_id: int) -> str:
    """``memory:<id>``: the key of a note in the block and in tool answers."""
    return f"memory:{note_id}"


#: How many earlier versions are kept per note.
MAX_VERSIONS = 10


def still_valid(notes: list[Note], now: datetime) -> list[Note]:
    """``notes`` without those whose ``valid_until`` has passed by ``now``."""
    return [note for note in notes if not note.expired(now)]


def newest_first(notes: list[Note]) -> list[Note]:
    """Notes ordered most recently changed first (ties: the higher id first)."""
    return sorted(notes, key=lambda note: (note.updated_at, note.id), reverse=True)
