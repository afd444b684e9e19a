"""The note rules: validation, secrets, duplicates and limits.

Plain Python over :class:`~agent_memory.notes.Note` values, so every entry point (the tool, the
HTTP API, the screen, the admin, the optimizer) applies exactly the same checks. The checks that
depend on a person's other notes take them as a :class:`NoteSet` (the counts the limits need and
a lookup of the notes with a given text) or as a plain list; stores call them inside their write
transaction, under the per-user lock. Secrets are looked for in the text being written only.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import date, datetime, time, timedelta
from typing import Any, Protocol, runtime_checkable

from django.utils import timezone
from django.utils.translation import gettext

from .conf import Limits
from .errors import DuplicateNote, InvalidNote, LimitReached
from .kinds import NoteSource
from .notes import NewNote, Note
from .secrets import find_secret

MAX_CATEGORIES = 3
MAX_CATEGORY_CHARS = 60
MAX_CONTENT_CHARS = 500


def _categories_shape() -> str:
    return gettext('categories must be a list of 1 to 3 names, e.g. ["Preferences", "Language"]')


# --- validation -------------------------------------------------------------------------------


def clean_categories(value: Any) -> tuple[str, ...]:
    """Validate and strip a note's categories; raise :class:`InvalidNote` saying what to fix."""
    if isinstance(value, str):
        raise InvalidNote(
            gettext("{shape}, not a single string.").format(shape=_categories_shape()),
            code="categories_shape",
        )
    if not isinstance(value, (list, tuple)):
        raise InvalidNote(
            gettext("{shape}.").format(shape=_categories_shape()), code="categories_shape"
        )
    if not 1 <= len(value) <= MAX_CATEGORIES:
        raise InvalidNote(
            gettext(
                "A note needs 1 to {max} categories; got {count}. Keep the most specific ones."
            ).format(max=MAX_CATEGORIES, count=len(value)),
            code="categories_count",
            count=len(value),
            max=MAX_CATEGORIES,
        )
    cleaned: list[str] = []
    seen: dict[str, str] = {}
    for number, raw in enumerate(value, start=1):
        if not isinstance(raw, str):
            raise InvalidNote(
                gettext("Every category must be text; {shape}.").format(shape=_categories_shape()),
                code="categories_shape",
            )
        name = raw.strip()
        if not name:
            raise InvalidNote(
                gettext("A category is empty; give every category a name."), code="category_empty"
            )
        # Before any message that quotes the name, so a secret is never repeated back. Messages
        # quote at most the first 40 characters; scanning a few times that bounds the work.
        secret = find_secret(name[: MAX_CATEGORY_CHARS * 4])
        if secret:
            raise InvalidNote(
                gettext(
                    "Memory is not a place for passwords, keys or card numbers: category {number} "
                    "contains {secret}. Name the category without it."
                ).format(number=number, secret=gettext(secret)),
                code="category_secret",
                number=number,
                secret=secret,
            )
        if len(name) > MAX_CATEGORY_CHARS:
            raise InvalidNote(
                gettext(
                    'Category "{name}" is {length} characters long; shorten it to {max} or fewer.'
                ).format(name=_excerpt(name), length=len(name), max=MAX_CATEGORY_CHARS),
                code="category_too_long",
                name=_excerpt(name),
                length=len(name),
                max=MAX_CATEGORY_CHARS,
            )
        bad = _unstorable_character(name, allowed="", offset=_leading_space(raw))
        if bad:
            raise InvalidNote(
                gettext("A category contains {character}; remove it.").format(character=bad),
                code="category_unprintable",
                character=bad,
            )
        if not has_visible_character(name):
            raise InvalidNote(
                gettext(
                    "Category {number} is made only of invisible characters; give it a name "
                    "people can read."
                ).format(number=number),
                code="category_invisible",
                number=number,
            )
        if "/" in name:
            raise InvalidNote(
                gettext(
                    'Category "{name}" contains "/"; use separate categories instead '
                    'of a path, e.g. ["Work", "Tools"].'
                ).format(name=_excerpt(name)),
                code="category_slash",
                name=_excerpt(name),
            )
        folded = name.casefold()
        if folded in seen:
            raise InvalidNote(
                gettext(
                    'Categories "{first}" and "{second}" are the same; list each category once.'
                ).format(first=seen[folded], second=name),
                code="category_repeated",
                first=seen[folded],
                second=name,
            )
        seen[folded] = name
        cleaned.append(name)
    return tuple(cleaned)


def clean_content(value: Any) -> str:
    """Validate and strip a note's text, refusing secrets; raise :class:`InvalidNote`."""
    if not isinstance(value, str):
        raise InvalidNote(
            gettext("content must be the note's text, a string of 1 to 500 characters."),
            code="content_shape",
        )
    text = value.strip()
    if not text:
        raise InvalidNote(
            gettext("content is empty; write what to remember."), code="content_empty"
        )
    if len(text) > MAX_CONTENT_CHARS:
        raise InvalidNote(
            gettext(
                "content is {length} characters long; the limit is {max}. "
                "Shorten it or split it into separate notes."
            ).format(length=len(text), max=MAX_CONTENT_CHARS),
            code="content_too_long",
            length=len(text),
            max=MAX_CONTENT_CHARS,
        )
    bad = _unstorable_character(text, allowed="\n\t\r", offset=_leading_space(value))
    if bad:
        raise InvalidNote(
            gettext("content contains {character}; remove it and send plain text.").format(
                character=bad
            ),
            code="content_unprintable",
            character=bad,
        )
    if not has_visible_character(text):
        raise InvalidNote(
            gettext(
                "content is made only of invisible characters (such as zero-width spaces); "
                "write what to remember in visible text."
            ),
            code="content_invisible",
        )
    secret = find_secret(text)
    if secret:
        raise InvalidNote(
            gettext(
                "Memory is not a place for passwords, keys or card numbers: this text contains "
                "{secret}. Save the note without it (you may say where the person keeps it)."
            ).format(secret=gettext(secret)),
            code="secret",
            secret=secret,
        )
    return text


def clean_note(categories: Any, content: Any, source: str = NoteSource.AGENT) -> NewNote:
    """Validate one note's fields and return it ready to store.

    ``source`` comes from code, never from the model or the person, so a wrong one is a
    programming error (``ValueError``), not an ``invalid`` answer.
    """
    if source not in set(NoteSource):
        raise ValueError(f"source must be one of {', '.join(NoteSource)}; got {source!r}.")
    return NewNote(
        categories=clean_categories(categories),
        content=clean_content(content),
        source=NoteSource(source),
    )


#: Characters that change the direction of the text around them (overrides, embeddings,
#: isolates, marks): shown as they are, they make a note read differently from what it holds.
BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)


#: Letters and symbols that draw nothing (Hangul fillers, the blank Braille pattern, the
#: Mongolian vowel separator), though their categories say otherwise.
BLANK_CHARACTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800\u180e")
#: Categories that never draw on their own: separators, format characters (zero-width space,
#: joiners, the byte-order mark, soft hyphen), controls, and marks (which only change the
#: character before them).
_INVISIBLE_CATEGORIES = frozenset({"Zs", "Zl", "Zp", "Cf", "Cc", "Cs", "Mn", "Me"})


def has_visible_character(text: str) -> bool:
    """Whether ``text`` has at least one character that shows (not only zero-width, blank or
    combining ones)."""
    return any(
        not char.isspace()
        and char not in BLANK_CHARACTERS
        and unicodedata.category(char) not in _INVISIBLE_CATEGORIES
        for char in text
    )


#: Controls (Cc), lone surrogates (Cs) and direction controls: one regular expression finds the
#: first, so a long text is not walked character by character in Python.
_UNSTORABLE_RE = re.compile(
    "[\x00-\x1f\x7f-\x9f\ud800-\udfff" + "".join(sorted(BIDI_CONTROLS)) + "]"
)


def _unstorable_character(text: str, allowed: str, offset: int = 0) -> str | None:
    """Describe the first control character, lone surrogate or text-direction control in
    ``text`` (not in ``allowed``), with its position (1-based, counted from ``offset``).

    Such characters are never meant as note text, PostgreSQL cannot store NUL at all, and
    direction controls can make a note display differently from what it says.
    """
    for found in _UNSTORABLE_RE.finditer(text):
        char, index = found.group(), offset + found.start() + 1
        if char in allowed:
            continue
        code = f"U+{ord(char):04X}"
        if char in BIDI_CONTROLS:
            return gettext(
                "the invisible text-direction character {code} ({name}) at position {position}"
            ).format(code=code, name=unicodedata.name(char), position=index)
        if unicodedata.category(char) in ("Cc", "Cs"):
            return gettext("the unprintable character {code} at position {position}").format(
                code=code, position=index
            )
    return None


def _leading_space(value: str) -> int:
    return len(value) - len(value.lstrip())


def _excerpt(text: str, size: int = 40) -> str:
    return text if len(text) <= size else text[: size - 1] + "…"


# --- ids, versions, origins and batches -------------------------------------------------------

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
            )
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
            )
        )
    return number


ORIGIN_MAX_CHARS = 200


def clean_origin(value: Any) -> str:
    """The ``origin`` a host passed: a short string such as ``chat:42`` (or ``""``)."""
    if value is None:
        return ""
    if not isinstance(value, str) or len(value.strip()) > ORIGIN_MAX_CHARS:
        raise InvalidNote(
            gettext("origin must be a short text (at most 200 characters), such as chat:42.")
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
        raise InvalidNote(_validity_shape(), code="valid_until")
    now = now or timezone.now()
    if moment <= now:
        raise InvalidNote(
            gettext("valid_until {value} has already passed. ").format(value=moment.isoformat())
            + _validity_shape(),
            code="valid_until_past",
        )
    if moment > now + MAX_VALIDITY:
        raise InvalidNote(
            gettext("valid_until {value} is more than 10 years ahead. ").format(
                value=moment.isoformat()
            )
            + _validity_shape(),
            code="valid_until_far",
        )
    return moment


def clean_batch(
    notes: Any, limits: Limits, source: str = NoteSource.AGENT, origin: str = ""
) -> list[NewNote]:
    """A create batch (``[{"categories", "content"}, …]``) checked note by note, all or none,
    each with ``source`` and the cleaned ``origin``.

    A bad note in a batch of several is named by its number (:meth:`InvalidNote.in_batch`).
    """
    if not isinstance(notes, (list, tuple)):
        raise InvalidNote(
            gettext('notes must be a list of {"categories": [...], "content": "..."}.')
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
                'Note {number} of {count} must be an object {{"categories": [...], '
                '"content": "..."}}.'
            ).format(number=index + 1, count=count)
        )
    try:
        note = clean_note(item.get("categories"), item.get("content"), source)
        note = replace(note, valid_until=clean_valid_until(item.get("valid_until")))
    except InvalidNote as error:
        if count == 1:
            raise
        raise error.in_batch(index + 1, count) from None
    return replace(note, origin=origin)


# --- duplicates -------------------------------------------------------------------------------


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


# --- what the checks need to know of a person's notes -----------------------------------------


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


def _duplicate_error(existing: Note) -> DuplicateNote:
    return DuplicateNote(
        gettext(
            "This text is already saved as {key} (categories: {categories}). "
            "Update {key} instead of creating a new note."
        ).format(key=existing.key, categories=", ".join(existing.categories)),
        existing_id=existing.id,
    )


# --- checks against a person's current notes --------------------------------------------------


def check_batch_size(count: int, limits: Limits) -> None:
    if count < 1:
        raise InvalidNote(
            gettext("notes must hold 1 to {max} notes; it is empty.").format(max=limits.max_batch)
        )
    if count > limits.max_batch:
        raise InvalidNote(
            gettext(
                "One create takes at most {max} notes; got {count}. Send the rest in another call."
            ).format(max=limits.max_batch, count=count)
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
                        "Notes {first} and {second} of this batch have the same text "
                        "in a shared category; send it once."
                    ).format(first=earlier_index + 1, second=index + 1)
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
                "Memory is full: {count} of {limit} notes are saved and this adds "
                "{added}. Delete or merge outdated notes first, then try again."
            ).format(count=count, limit=limits.max_notes, added=added_notes),
            code="too_many_notes",
            count=count,
            limit=limits.max_notes,
            added=added_notes,
        )
    if chars + added_chars > limits.max_total_chars:
        raise LimitReached(
            gettext(
                "Memory is full: {count} of {limit} characters are used and this "
                "adds {added}. Delete or merge outdated notes, or shorten this one, then try "
                "again."
            ).format(count=chars, limit=limits.max_total_chars, added=added_chars),
            code="too_many_chars",
            count=chars,
            limit=limits.max_total_chars,
            added=added_chars,
        )


def check_update(existing: Notes, note: Note, new: NewNote, limits: Limits) -> None:
    """Raise if ``note`` may not become ``new``: duplicates of other notes, then limits."""
    held = note_set(existing)
    duplicate = find_duplicate(
        new.categories, new.content, held.with_texts([new.content]), exclude_id=note.id
    )
    if duplicate is not None:
        raise _duplicate_error(duplicate)
    growth = len(new.content) - len(note.content)
    if growth > 0:
        # ``total_chars`` counts ``note`` as it is now.
        chars = held.total_chars
        if chars + growth > limits.max_total_chars:
            raise LimitReached(
                gettext(
                    "Memory is full: {count} of {limit} characters are used and "
                    "this edit adds {added}. Delete or merge outdated notes, or shorten this one, "
                    "then try again."
                ).format(count=chars, limit=limits.max_total_chars, added=growth),
                code="too_many_chars",
                count=chars,
                limit=limits.max_total_chars,
                added=growth,
            )
