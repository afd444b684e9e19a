"""The other values of a call: note ids, versions, where a note was saved and when it ends.

Strict on purpose: an id is ASCII digits (``"²"`` is a digit to Python, not an id), a moment
without an offset is refused rather than guessed.
"""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta
from typing import Any

from django.utils import timezone
from django.utils.translation import gettext

from ..errors import ErrorCode, InvalidNote

_KEY_RE = re.compile(r"^memory:([0-9]+)$")

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


def clean_id(value: Any) -> int:
    """A note id given by the model, the person or the host (``12``, ``"12"``, ``"memory:12"``);
    raise :class:`InvalidNote` saying where to find one otherwise."""
    number = parse_note_id(value)
    if number is None:
        raise InvalidNote(
            gettext(
                'id must be a note id such as 12 or "memory:12", as shown in the memory block or '
                "in search results."
            ),
            code=ErrorCode.ID_SHAPE,
        )
    return number


def clean_version(value: Any) -> int:
    """A note's version (``3`` or ``"3"``, from 1 up); raise :class:`InvalidNote` otherwise."""
    number = parse_id(value.strip() if isinstance(value, str) else value)
    if number is None:
        raise InvalidNote(
            gettext(
                "version must be the note's current version, a whole number from 1 up, as shown "
                "in the memory block or in search results."
            ),
            code=ErrorCode.VERSION_SHAPE,
        )
    return number


ORIGIN_MAX_CHARS = 200


def clean_origin(value: Any) -> str:
    """The ``origin`` a host passed: a short string such as ``chat:42`` (or ``""``)."""
    if value is None:
        return ""
    if not isinstance(value, str) or len(value.strip()) > ORIGIN_MAX_CHARS:
        raise InvalidNote(
            gettext("origin must be a short text (at most 200 characters), such as chat:42."),
            code=ErrorCode.ORIGIN_SHAPE,
        )
    return value.strip()


#: How far ahead a note's ``valid_until`` may be.
MAX_VALIDITY = timedelta(days=3653)

_DATE_RE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")


def _validity_shape() -> str:
    return gettext(
        "valid_until must be a date YYYY-MM-DD (the note holds through the end of that day) or "
        "a date-time with its offset, e.g. 2026-12-05T18:00:00+01:00, between now and 10 years "
        "ahead; null for a note without an end."
    )


def end_of_day(day: date) -> datetime:
    """The last moment of ``day`` in the site's time zone (``TIME_ZONE``)."""
    return timezone.make_aware(datetime.combine(day, time.max), timezone.get_default_timezone())


def clean_valid_until(value: Any, now: datetime | None = None) -> datetime | None:
    """The moment a note stops holding, from ``None``, an ISO date (through the end of that day
    in ``TIME_ZONE``), an ISO date-time with an offset, or a ``date`` / aware ``datetime``.

    A moment already past at ``now`` or more than 10 years ahead is ``invalid``.
    """
    if value is None:
        return None
    moment: datetime | None = None
    if isinstance(value, datetime):
        moment = value if timezone.is_aware(value) else None
    elif isinstance(value, date):
        moment = end_of_day(value)
    elif isinstance(value, str):
        text = value.strip()
        try:
            if _DATE_RE.match(text):
                moment = end_of_day(date.fromisoformat(text))
            elif len(text) <= 40:
                parsed = datetime.fromisoformat(text)
                moment = parsed if parsed.tzinfo is not None else None
        except ValueError:
            moment = None
    if moment is None:
        raise InvalidNote(_validity_shape(), code=ErrorCode.VALID_UNTIL)
    now = now or timezone.now()
    if moment <= now:
        raise InvalidNote(
            gettext("valid_until %(value)s has already passed. ") % {"value": moment.isoformat()}
            + _validity_shape(),
            code=ErrorCode.VALID_UNTIL_PAST,
        )
    if moment > now + MAX_VALIDITY:
        raise InvalidNote(
            gettext("valid_until %(value)s is more than 10 years ahead. ")
            % {"value": moment.isoformat()}
            + _validity_shape(),
            code=ErrorCode.VALID_UNTIL_FAR,
        )
    return moment


__all__ = [
    "MAX_ID",
    "MAX_VALIDITY",
    "ORIGIN_MAX_CHARS",
    "clean_id",
    "clean_origin",
    "clean_valid_until",
    "clean_version",
    "end_of_day",
    "parse_id",
    "parse_note_id",
]
