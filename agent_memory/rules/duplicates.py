"""Duplicates, and what the write checks need to know of a person's notes.

Two notes are the same note when their texts match once case and runs of white space are
folded and they share a category. The checks see a person's notes as a :class:`NoteSet`: the
counts the limits need and the notes with a given text, so a store need not read every note.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from typing import Protocol, runtime_checkable

from ..notes import NewNote, Note


def text_key(content: str) -> str:
    """The form two texts are compared in: case-folded, runs of whitespace folded to one."""
    return " ".join(content.split()).casefold()


def text_digest(content: str) -> str:
    """A short fixed-size key of :func:`text_key`, for an index of the notes by their text.

    Two texts with the same digest are only *candidates*: compare their :func:`text_key` too.
    """
    return hashlib.blake2b(text_key(content).encode(), digest_size=16).hexdigest()


def category_keys(categories: Iterable[str]) -> frozenset[str]:
    return frozenset(name.strip().casefold() for name in categories)


def is_duplicate(a_categories: Iterable[str], a_content: str, b: Note | NewNote) -> bool:
    """Same text (folded) and at least one shared category (case-insensitively)."""
    return text_key(a_content) == text_key(b.content) and bool(
        category_keys(a_categories) & category_keys(b.categories)
    )


def find_duplicate(
    categories: Iterable[str], content: str, notes: Iterable[Note], exclude_id: int | None = None
) -> Note | None:
    """The first of ``notes`` that the given text would duplicate, if any."""
    categories = tuple(categories)
    for note in notes:
        if note.id != exclude_id and is_duplicate(categories, content, note):
            return note
    return None


@runtime_checkable
class NoteSet(Protocol):
    """A person's current notes as the write checks see them, without reading them all.

    ``note_count`` and ``total_chars`` are the figures the limits are checked against;
    :meth:`with_texts` returns (at least) the notes whose text equals one of ``contents`` once
    folded (:func:`text_key`), which is all the duplicate check needs. Stores with counters and
    an index of the texts pass their own; a plain list of notes works through :class:`NoteList`.
    A store's set is good while the check it was passed to runs (under the person's lock).
    """

    @property
    def note_count(self) -> int: ...

    @property
    def total_chars(self) -> int: ...

    def with_texts(self, contents: Sequence[str]) -> Sequence[Note]: ...


class NoteList:
    """:class:`NoteSet` over a list of every note (stores without counters, tests)."""

    def __init__(self, notes: Iterable[Note]) -> None:
        self.notes = list(notes)

    @property
    def note_count(self) -> int:
        return len(self.notes)

    @property
    def total_chars(self) -> int:
        return sum(len(note.content) for note in self.notes)

    def with_texts(self, contents: Sequence[str]) -> list[Note]:
        keys = {text_key(content) for content in contents}
        return [note for note in self.notes if text_key(note.content) in keys]


#: What the checks accept: a store's :class:`NoteSet`, or simply every note.
Notes = NoteSet | Sequence[Note]


def note_set(existing: Notes) -> NoteSet:
    """``existing`` as a :class:`NoteSet` (a list of notes is wrapped)."""
    return existing if isinstance(existing, NoteSet) else NoteList(existing)


__all__ = [
    "NoteList",
    "NoteSet",
    "Notes",
    "category_keys",
    "find_duplicate",
    "is_duplicate",
    "note_set",
    "text_digest",
    "text_key",
]
