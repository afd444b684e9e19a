"""The note as the core sees it: a plain, immutable value independent of any store."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from .kinds import NoteSource

#: Every value a note's ``source`` can have.
SOURCES = tuple(NoteSource)

_KEY_RE = re.compile(r"^memory:([0-9]+)$")


@dataclass(frozen=True)
class NewNote:
    """A note about to be written: already validated, not yet stored."""

    categories: tuple[str, ...]
    content: str
    source: NoteSource = NoteSource.AGENT
    #: Where the note was saved, as the host names it (e.g. ``chat:42``); ``""`` when unknown.
    origin: str = ""


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
        }


def note_key(note_id: int) -> str:
    """``memory:<id>``: the key of a note in the block and in tool answers."""
    return f"memory:{note_id}"


#: The largest id a note or merge run can have: the database's 64-bit integer key.
MAX_ID = 2**63 - 1


def parse_id(value: Any) -> int | None:
    """A strict id: an ``int`` or a string of ASCII digits (``"12"``), from 1 up to
    :data:`MAX_ID`; ``None`` for anything else (``"²"``, ``"١٢"``, ``"-1"``, ``"1e3"``, ``" 1"``,
    ``"memory:12"``, a number too large for the database).

    ``str.isdigit`` alone is not enough: ``"²".isdigit()`` is true and ``int("²")`` fails.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        if not (0 < len(value) <= 19 and value.isascii() and value.isdigit()):
            return None
        value = int(value)
    if isinstance(value, int) and 0 < value <= MAX_ID:
        return value
    return None


def parse_note_id(value: Any) -> int | None:
    """Read a note id given as ``12``, ``"12"`` or ``"memory:12"`` (surrounding spaces
    allowed); ``None`` if it is neither (see :func:`parse_id`)."""
    if isinstance(value, str):
        text = value.strip()
        match = _KEY_RE.match(text)
        return parse_id(match.group(1) if match else text)
    return parse_id(value)


def newest_first(notes: list[Note]) -> list[Note]:
    """Notes ordered most recently changed first (ties: the higher id first)."""
    return sorted(notes, key=lambda note: (note.updated_at, note.id), reverse=True)
