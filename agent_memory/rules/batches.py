"""A create's batch of notes, checked note by note, all or none."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from django.utils.translation import gettext

from ..conf import Limits
from ..errors import ErrorCode, InvalidNote
from ..kinds import NoteSource
from ..notes import NewNote
from .checks import check_batch_size
from .fields import clean_note
from .values import clean_origin, clean_valid_until


def clean_batch(
    notes: Any, limits: Limits, source: str = NoteSource.AGENT, origin: str = ""
) -> list[NewNote]:
    """A create batch (``[{"categories", "content"}, …]``) checked note by note, all or none,
    each with ``source`` and the cleaned ``origin``.

    A bad note in a batch of several is named by its number (:meth:`InvalidNote.in_batch`).
    """
    if not isinstance(notes, (list, tuple)):
        raise InvalidNote(
            gettext('notes must be a list of {"categories": [...], "content": "..."}.'),
            code=ErrorCode.NOTES_SHAPE,
        )
    check_batch_size(len(notes), limits)
    where = clean_origin(origin)
    return [
        _clean_batch_item(item, source, where, index, len(notes))
        for index, item in enumerate(notes)
    ]


def _clean_batch_item(item: Any, source: str, origin: str, index: int, count: int) -> NewNote:
    if not isinstance(item, Mapping):
        raise InvalidNote(
            gettext(
                'Note %(number)s of %(count)s must be an object {"categories": [...], '
                '"content": "..."}.'
            )
            % {"number": index + 1, "count": count},
            code=ErrorCode.NOTES_SHAPE,
        )
    try:
        note = clean_note(item.get("categories"), item.get("content"), source)
        note = replace(note, valid_until=clean_valid_until(item.get("valid_until")))
    except InvalidNote as error:
        if count == 1:
            raise
        raise error.in_batch(index + 1, count) from None
    return replace(note, origin=origin)


__all__ = ["clean_batch"]
