"""Rows of the ``MemoryNote`` table as the core's values: one conversion to
:class:`~agent_memory.notes.Note`, and the person's notes as a write's check sees them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Q

from ..locking import Tally
from ..models import MemoryNote
from ..notes import Note
from ..rules import text_digest

#: The fields a :class:`~agent_memory.notes.Note` is read from, in the order of its fields.
NOTE_FIELDS = (
    *("pk", "user_id", "categories", "content"),
    *("version", "source", "created_at", "updated_at", "origin"),
    *("created_by", "pinned", "valid_until"),
)


def note_of_values(values: Sequence[Any]) -> Note:
    """The note of one row read as :data:`NOTE_FIELDS` (``values_list`` or a cursor)."""
    pk, user, categories, *rest = values[: len(NOTE_FIELDS)]
    return Note(pk, user, tuple(categories), *rest)


def live(rows: Any, now: datetime) -> Any:
    """``rows`` without the notes whose ``valid_until`` has passed by ``now``."""
    return rows.filter(Q(valid_until__isnull=True) | Q(valid_until__gt=now))


def to_note(row: MemoryNote) -> Note:
    """The note of a ``MemoryNote`` instance."""
    return note_of_values([getattr(row, name) for name in NOTE_FIELDS])


@dataclass(frozen=True)
class CountCheck:
    """A person's stored counts against their notes (see ``DjangoStore.check_counts``)."""

    user_id: Any
    stored: Tally | None
    true: Tally
    stale_text_keys: int

    @property
    def drifted(self) -> bool:
        """Whether anything stored was wrong (a person with no notes needs no row)."""
        counts_wrong = self.stored != self.true and not (
            self.stored is None and self.true == Tally(0, 0)
        )
        return counts_wrong or self.stale_text_keys > 0


class StoredNotes:
    """The person's notes as the write checks see them (:class:`~agent_memory.rules.NoteSet`):
    the counts kept in their lock row, and only the rows whose text key matches.

    ``rows()`` gives the person's rows (built only if a lookup needs them). ``found`` are the
    notes already read for the texts whose keys are ``keys`` (read in the same round trip as
    the lock); other texts are looked up when asked, leaving out ``written`` (notes this write
    has already changed in its transaction) but including ``replaced`` (the note an update
    changes, as it was).
    """

    def __init__(
        self,
        rows: Callable[[], Any],
        tally: Tally,
        *,
        found: Sequence[Note] = (),
        keys: frozenset[str] = frozenset(),
        written: frozenset[int] = frozenset(),
        replaced: Note | None = None,
    ) -> None:
        self._rows = rows
        self._tally = tally
        self._found, self._keys = list(found), keys
        self._written, self._replaced = written, replaced

    @property
    def note_count(self) -> int:
        return self._tally.notes

    @property
    def total_chars(self) -> int:
        return self._tally.chars

    def with_texts(self, contents: Sequence[str]) -> list[Note]:
        keys = {text_digest(content) for content in contents}
        if keys <= self._keys:
            return [note for note in self._found if text_digest(note.content) in keys]
        rows = self._rows().filter(text_key__in=sorted(keys)).exclude(pk__in=self._written)
        notes = [note_of_values(values) for values in rows.values_list(*NOTE_FIELDS)]
        if self._replaced is not None and text_digest(self._replaced.content) in keys:
            notes.append(self._replaced)
        return notes
