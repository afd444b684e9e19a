"""The checks of a write against the person's current notes: duplicates, then the limits.

Stores call them inside their write transaction, under the per-user lock, with the person's
notes as a :class:`~agent_memory.rules.duplicates.NoteSet` (or simply every note).
"""

from __future__ import annotations

from collections.abc import Sequence

from django.utils.translation import gettext

from ..conf import Limits
from ..errors import DuplicateNote, ErrorCode, InvalidNote, LimitReached
from ..notes import NewNote, Note
from .duplicates import Notes, find_duplicate, is_duplicate, note_set


def _duplicate_error(existing: Note) -> DuplicateNote:
    return DuplicateNote(
        gettext(
            "This text is already saved as %(key)s (categories: %(categories)s). Update "
            "%(key)s instead of creating a new note."
        )
        % {"key": existing.key, "categories": ", ".join(existing.categories)},
        existing_id=existing.id,
    )


def _too_many_chars(used: int, limit: int, added: int) -> LimitReached:
    """A write that adds ``added`` characters to the ``used`` of ``limit``: the one message of
    both a create and an edit that would pass ``MAX_TOTAL_CHARS``."""
    return LimitReached(
        gettext(
            "Memory is full: %(count)s of %(limit)s characters are used and this adds "
            "%(added)s. Delete or merge outdated notes, or shorten this one, then try again."
        )
        % {"count": used, "limit": limit, "added": added},
        code=ErrorCode.TOO_MANY_CHARS,
        count=used,
        limit=limit,
        added=added,
    )


def check_batch_size(count: int, limits: Limits) -> None:
    """Raise :class:`InvalidNote` unless a create sends 1 to ``MAX_BATCH`` notes."""
    if count < 1:
        raise InvalidNote(
            gettext("notes must hold 1 to %(max)s notes; it is empty.") % {"max": limits.max_batch},
            code=ErrorCode.BATCH_SIZE,
        )
    if count > limits.max_batch:
        raise InvalidNote(
            gettext(
                "One create takes at most %(max)s notes; got %(count)s. Send the rest in another "
                "call."
            )
            % {"max": limits.max_batch, "count": count},
            code=ErrorCode.BATCH_SIZE,
            count=count,
            max=limits.max_batch,
        )


def check_create(existing: Notes, new: Sequence[NewNote], limits: Limits) -> None:
    """Raise if ``new`` may not be added to ``existing``: duplicates, then limits."""
    held = note_set(existing)
    candidates = held.with_texts([note.content for note in new])
    for index, note in enumerate(new):
        duplicate = find_duplicate(note.categories, note.content, candidates)
        if duplicate is not None:
            raise _duplicate_error(duplicate)
        for earlier_index, earlier in enumerate(new[:index]):
            if is_duplicate(note.categories, note.content, earlier):
                raise DuplicateNote(
                    gettext(
                        "Notes %(first)s and %(second)s of this batch have the same text in a "
                        "shared category; send it once."
                    )
                    % {"first": earlier_index + 1, "second": index + 1}
                )
    check_room(held, len(new), sum(len(note.content) for note in new), limits)


def check_room(existing: Notes, added_notes: int, added_chars: int, limits: Limits) -> None:
    """Raise :class:`LimitReached` if adding these notes and characters passes a limit."""
    held = note_set(existing)
    count = held.note_count
    chars = held.total_chars
    if count + added_notes > limits.max_notes:
        raise LimitReached(
            gettext(
                "Memory is full: %(count)s of %(limit)s notes are saved and this adds "
                "%(added)s. Delete or merge outdated notes first, then try again."
            )
            % {"count": count, "limit": limits.max_notes, "added": added_notes},
            code=ErrorCode.TOO_MANY_NOTES,
            count=count,
            limit=limits.max_notes,
            added=added_notes,
        )
    if chars + added_chars > limits.max_total_chars:
        raise _too_many_chars(chars, limits.max_total_chars, added_chars)


def check_update(existing: Notes, note: Note, new: NewNote, limits: Limits) -> None:
    """Raise if ``note`` may not become ``new``: duplicates of other notes, then limits."""
    held = note_set(existing)
    duplicate = find_duplicate(
        new.categories, new.content, held.with_texts([new.content]), exclude_id=note.id
    )
    if duplicate is not None:
        raise _duplicate_error(duplicate)
    growth = len(new.content) - len(note.content)
    # ``total_chars`` counts ``note`` as it is now.
    if growth > 0 and held.total_chars + growth > limits.max_total_chars:
        raise _too_many_chars(held.total_chars, limits.max_total_chars, growth)


__all__ = ["check_batch_size", "check_create", "check_room", "check_update"]
