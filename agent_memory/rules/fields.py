"""A note's own fields: its categories and its text, checked and stripped.

Every message is worded for the model (it names ``categories`` and ``content``); the error's
code and figures let :mod:`~agent_memory.wording` say the same to a person.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from django.utils.translation import gettext

from ..errors import ErrorCode, InvalidNote
from ..kinds import NoteSource
from ..notes import NewNote
from ..secrets import find_secret
from .characters import excerpt, has_visible_character, leading_space, unstorable_character

MAX_CATEGORIES = 3
MAX_CATEGORY_CHARS = 60
MAX_CONTENT_CHARS = 500


def _categories_shape() -> str:
    return gettext('categories must be a list of 1 to 3 names, e.g. ["Preferences", "Language"]')


def clean_categories(value: Any) -> tuple[str, ...]:
    """Validate and strip a note's categories; raise :class:`InvalidNote` saying what to fix."""
    if isinstance(value, str):
        raise InvalidNote(
            gettext("%(shape)s, not a single string.") % {"shape": _categories_shape()},
            code=ErrorCode.CATEGORIES_SHAPE,
        )
    if not isinstance(value, (list, tuple)):
        raise InvalidNote(
            gettext("%(shape)s.") % {"shape": _categories_shape()},
            code=ErrorCode.CATEGORIES_SHAPE,
        )
    if not 1 <= len(value) <= MAX_CATEGORIES:
        raise InvalidNote(
            gettext(
                "A note needs 1 to %(max)s categories; got %(count)s. Keep the most specific ones."
            )
            % {"max": MAX_CATEGORIES, "count": len(value)},
            code=ErrorCode.CATEGORIES_COUNT,
            count=len(value),
            max=MAX_CATEGORIES,
        )
    cleaned: list[str] = []
    seen: dict[str, str] = {}
    for number, raw in enumerate(value, start=1):
        if not isinstance(raw, str):
            raise InvalidNote(
                gettext("Every category must be text; %(shape)s.") % {"shape": _categories_shape()},
                code=ErrorCode.CATEGORIES_SHAPE,
            )
        name = raw.strip()
        if not name:
            raise InvalidNote(
                gettext("A category is empty; give every category a name."),
                code=ErrorCode.CATEGORY_EMPTY,
            )
        # Before any message that quotes the name, so a secret is never repeated back. Messages
        # quote at most the first 40 characters; scanning a few times that bounds the work.
        secret = find_secret(name[: MAX_CATEGORY_CHARS * 4])
        if secret:
            raise InvalidNote(
                gettext(
                    "Memory is not a place for passwords, keys or card numbers: category "
                    "%(number)s contains %(secret)s. Name the category without it."
                )
                % {"number": number, "secret": gettext(secret)},
                code=ErrorCode.CATEGORY_SECRET,
                number=number,
                secret=secret,
            )
        if len(name) > MAX_CATEGORY_CHARS:
            raise InvalidNote(
                gettext(
                    'Category "%(name)s" is %(length)s characters long; shorten it to %(max)s or '
                    "fewer."
                )
                % {"name": excerpt(name), "length": len(name), "max": MAX_CATEGORY_CHARS},
                code=ErrorCode.CATEGORY_TOO_LONG,
                name=excerpt(name),
                length=len(name),
                max=MAX_CATEGORY_CHARS,
            )
        bad = unstorable_character(name, allowed="", offset=leading_space(raw))
        if bad:
            raise InvalidNote(
                gettext("A category contains %(character)s; remove it.") % {"character": bad},
                code=ErrorCode.CATEGORY_UNPRINTABLE,
                character=bad,
            )
        if not has_visible_character(name):
            raise InvalidNote(
                gettext(
                    "Category %(number)s is made only of invisible characters; give it a name "
                    "people can read."
                )
                % {"number": number},
                code=ErrorCode.CATEGORY_INVISIBLE,
                number=number,
            )
        if "/" in name:
            raise InvalidNote(
                gettext(
                    'Category "%(name)s" contains "/"; use separate categories instead of a '
                    'path, e.g. ["Work", "Tools"].'
                )
                % {"name": excerpt(name)},
                code=ErrorCode.CATEGORY_SLASH,
                name=excerpt(name),
            )
        folded = name.casefold()
        if folded in seen:
            raise InvalidNote(
                gettext(
                    'Categories "%(first)s" and "%(second)s" are the same; list each category once.'
                )
                % {"first": seen[folded], "second": name},
                code=ErrorCode.CATEGORY_REPEATED,
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
            code=ErrorCode.CONTENT_SHAPE,
        )
    text = value.strip()
    if not text:
        raise InvalidNote(
            gettext("content is empty; write what to remember."), code=ErrorCode.CONTENT_EMPTY
        )
    if len(text) > MAX_CONTENT_CHARS:
        raise InvalidNote(
            gettext(
                "content is %(length)s characters long; the limit is %(max)s. Shorten it or "
                "split it into separate notes."
            )
            % {"length": len(text), "max": MAX_CONTENT_CHARS},
            code=ErrorCode.CONTENT_TOO_LONG,
            length=len(text),
            max=MAX_CONTENT_CHARS,
        )
    bad = unstorable_character(text, allowed="\n\t\r", offset=leading_space(value))
    if bad:
        raise InvalidNote(
            gettext("content contains %(character)s; remove it and send plain text.")
            % {"character": bad},
            code=ErrorCode.CONTENT_UNPRINTABLE,
            character=bad,
        )
    if not has_visible_character(text):
        raise InvalidNote(
            gettext(
                "content is made only of invisible characters (such as zero-width spaces); "
                "write what to remember in visible text."
            ),
            code=ErrorCode.CONTENT_INVISIBLE,
        )
    secret = find_secret(text)
    if secret:
        raise InvalidNote(
            gettext(
                "Memory is not a place for passwords, keys or card numbers: this text contains "
                "%(secret)s. Save the note without it (you may say where the person keeps it)."
            )
            % {"secret": gettext(secret)},
            code=ErrorCode.SECRET,
            secret=secret,
        )
    return text


def clean_note(categories: Any, content: Any, source: str = NoteSource.AGENT) -> NewNote:
    """Validate one note's fields and return it ready to store.

    ``source`` comes from code, never from the model or the person, so a wrong one is a
    programming error (``ValueError``), not an ``invalid`` answer.
    """
    return NoteCleaner(source).clean(categories, content)


class NoteCleaner:
    """:func:`clean_note` for the many notes of one import: each distinct list of categories
    and each distinct text is checked, and scanned for secrets, once however often it comes
    back (the lines of a text file all share one list of categories). The checks are the same
    functions, so a repeated note is accepted or refused exactly as its first copy was."""

    def __init__(self, source: str = NoteSource.AGENT) -> None:
        if source not in set(NoteSource):
            raise ValueError(f"source must be one of {', '.join(NoteSource)}; got {source!r}.")
        self.source = NoteSource(source)
        self._categories: dict[tuple[str, ...], tuple[str, ...]] = {}
        self._contents: dict[str, str] = {}

    def clean(self, categories: Any, content: Any) -> NewNote:
        """One note's fields checked (:func:`clean_categories`, :func:`clean_content`)."""
        return NewNote(
            categories=self._clean_categories(categories),
            content=self._clean_content(content),
            source=self.source,
        )

    def _clean_categories(self, value: Any) -> tuple[str, ...]:
        if not isinstance(value, (list, tuple)) or not all(isinstance(n, str) for n in value):
            return clean_categories(value)  # refused, or odd: nothing worth remembering
        key = tuple(value)
        cleaned = self._categories.get(key)
        if cleaned is None:
            cleaned = self._categories[key] = clean_categories(value)
        return cleaned

    def _clean_content(self, value: Any) -> str:
        if not isinstance(value, str):
            return clean_content(value)
        cleaned = self._contents.get(value)
        if cleaned is None:
            cleaned = self._contents[value] = clean_content(value)
        return cleaned


# --- one category, one spelling ---------------------------------------------------------------


def category_key(name: str) -> str:
    """The form two category names are compared in: case-folded, runs of spaces folded to one
    and the ends stripped."""
    return " ".join(name.split()).casefold()


def same_spelling(categories: Iterable[str], known: Iterable[str]) -> tuple[str, ...]:
    """``categories`` spelled like the ``known`` ones they differ from only by case and spacing
    ("preferences" → "Preferences"), so one category does not become two groups; each once.

    ``known`` is in order of preference: the first spelling of a category wins (its most recent
    use, when the names are read from a person's notes newest first)."""
    spelling = _spellings(known)
    return tuple(dict.fromkeys(spelling.get(category_key(name), name) for name in categories))


def _spellings(known: Iterable[str]) -> dict[str, str]:
    spelling: dict[str, str] = {}
    for name in known:
        spelling.setdefault(category_key(name), name)
    return spelling


def spelled_like(notes: Sequence[NewNote], known: Iterable[str]) -> list[NewNote]:
    """``notes`` with each category spelled as the person's ``known`` category names (of their
    notes, newest first) spell it, case and spacing aside, or else as an earlier note of
    ``notes`` does; a new category keeps its own spelling. Every create, update and import is
    written through this rule."""
    spelling = _spellings(known)
    respelled = []
    for note in notes:
        categories = tuple(
            dict.fromkeys(spelling.setdefault(category_key(name), name) for name in note.categories)
        )
        respelled.append(
            note if categories == note.categories else replace(note, categories=categories)
        )
    return respelled


__all__ = [
    "MAX_CATEGORIES",
    "MAX_CATEGORY_CHARS",
    "MAX_CONTENT_CHARS",
    "NoteCleaner",
    "category_key",
    "clean_categories",
    "clean_content",
    "clean_note",
    "same_spelling",
    "spelled_like",
]
