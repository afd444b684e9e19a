"""What went wrong, in words written for a person: on the memory screen and in admin.

The core's messages (``AgentMemoryError.message``) are written for the model: they name fields
(``content``), show JSON and suggest what the agent could say instead. The screen never shows
them; it says the same thing for a person from the error's ``code`` and figures.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from .errors import AgentMemoryError, DuplicateNote, ErrorCode, LimitReached

#: Codes whose message belongs beside the text field.
CONTENT_CODES = frozenset(
    {
        ErrorCode.CONTENT_EMPTY,
        ErrorCode.CONTENT_SHAPE,
        ErrorCode.CONTENT_TOO_LONG,
        ErrorCode.CONTENT_UNPRINTABLE,
        ErrorCode.CONTENT_INVISIBLE,
        ErrorCode.SECRET,
        ErrorCode.DUPLICATE,
        ErrorCode.TOO_MANY_CHARS,
    }
)
#: Codes whose message belongs beside the categories field.
CATEGORY_CODES = frozenset(
    {
        ErrorCode.CATEGORIES_SHAPE,
        ErrorCode.CATEGORIES_COUNT,
        ErrorCode.CATEGORY_EMPTY,
        ErrorCode.CATEGORY_SECRET,
        ErrorCode.CATEGORY_TOO_LONG,
        ErrorCode.CATEGORY_UNPRINTABLE,
        ErrorCode.CATEGORY_INVISIBLE,
        ErrorCode.CATEGORY_SLASH,
        ErrorCode.CATEGORY_REPEATED,
    }
)
#: Codes whose message belongs beside the end date; everything else is about the note (or the
#: file) as a whole.
VALID_UNTIL_CODES = frozenset(
    {ErrorCode.VALID_UNTIL, ErrorCode.VALID_UNTIL_PAST, ErrorCode.VALID_UNTIL_FAR}
)


def field_of(error: AgentMemoryError) -> str | None:
    """The screen field an error is about (``"content"``, ``"categories"``,
    ``"valid_until"``), or ``None``."""
    if error.code in VALID_UNTIL_CODES:
        return "valid_until"
    if error.code in CONTENT_CODES:
        return "content"
    if error.code in CATEGORY_CODES:
        return "categories"
    return None


def too_long(length: int, limit: int) -> str:
    """A text over the limit: by how much, and what to do."""
    over = length - limit
    return ngettext(
        "The text is %(length)s characters long; a note holds up to %(max)s. Cut "
        "%(over)s character, or split the text into two notes.",
        "The text is %(length)s characters long; a note holds up to %(max)s. Cut "
        "%(over)s characters, or split the text into two notes.",
        over,
    ) % {"length": length, "max": limit, "over": over}


def _secret(params: dict[str, Any]) -> str:
    what = _(str(params.get("secret") or "a password or key"))
    return _(
        "This looks like %(secret)s. Memory is not a place for passwords, keys or card "
        "numbers: remove it and save the rest."
    ) % {"secret": what}


def _categories_count(params: dict[str, Any]) -> str:
    count = int(params.get("count") or 0)
    if count == 0:
        return _("Give the note a category, e.g. “Preferences”.")
    return _(
        "A note can have up to %(max)s categories; you gave %(count)s. Keep the most specific ones."
    ) % {"max": params.get("max", 3), "count": count}


def _message_for_code(code: ErrorCode, params: dict[str, Any]) -> str | None:
    simple: dict[ErrorCode, Callable[[], str]] = {
        ErrorCode.CONTENT_EMPTY: lambda: _("Write what the agent should remember."),
        ErrorCode.CONTENT_SHAPE: lambda: _("Write what the agent should remember."),
        ErrorCode.CONTENT_TOO_LONG: lambda: too_long(int(params["length"]), int(params["max"])),
        ErrorCode.CONTENT_UNPRINTABLE: lambda: (
            _(
                "The text contains an invisible control character (%(character)s). Delete it and "
                "save again."
            )
            % {"character": params.get("character", "")}
        ),
        ErrorCode.SECRET: lambda: _secret(params),
        ErrorCode.CATEGORY_SECRET: lambda: (
            _(
                "Category %(number)s looks like %(secret)s. Memory is not a place for passwords, "
                "keys or card numbers: name the category without it."
            )
            % {"number": params.get("number", 1), "secret": _(str(params.get("secret") or ""))}
        ),
        ErrorCode.CATEGORIES_COUNT: lambda: _categories_count(params),
        ErrorCode.CATEGORIES_SHAPE: lambda: _("Give 1 to 3 categories, separated by commas."),
        ErrorCode.CATEGORY_EMPTY: lambda: _("Give 1 to 3 categories, separated by commas."),
        ErrorCode.CATEGORY_TOO_LONG: lambda: (
            _(
                "The category “%(name)s” is %(length)s characters long; shorten it to %(max)s or "
                "fewer."
            )
            % params
        ),
        ErrorCode.CATEGORY_UNPRINTABLE: lambda: (
            _("A category contains an invisible control character (%(character)s). Delete it.")
            % {"character": params.get("character", "")}
        ),
        ErrorCode.CATEGORY_SLASH: lambda: _(
            "A category can’t contain “/”. To file the note under two categories, separate them "
            "with a comma: “Work, Tools”."
        ),
        ErrorCode.CATEGORY_REPEATED: lambda: (
            _("“%(first)s” and “%(second)s” are the same category; give it once.") % params
        ),
        ErrorCode.TOO_MANY_NOTES: lambda: (
            _(
                "Not enough room: this adds %(added)s notes, but only %(free)s of %(limit)s are "
                "free (%(count)s are saved). Delete at least %(over)s notes you no longer need, "
                "or add fewer, then try again."
            )
            % params
            if _has_room(params)
            else _(
                "Memory is full: %(count)s of %(limit)s notes are saved. Delete notes you no "
                "longer need, then try again."
            )
            % params
        ),
        ErrorCode.TOO_MANY_CHARS: lambda: (
            _(
                "Not enough room: this adds %(added)s characters, but only %(free)s of %(limit)s "
                "are free. Delete or shorten notes to free at least %(over)s characters, then "
                "try again."
            )
            % params
            if _has_room(params)
            else _(
                "Memory is full: %(count)s of %(limit)s characters are used. Delete notes you no "
                "longer need or shorten this one, then try again."
            )
            % params
        ),
        ErrorCode.IMPORT_UNREADABLE: lambda: _(
            "This file can’t be read. Choose a file made by “Download my memory”, or a plain "
            "text file with one note per line."
        ),
        ErrorCode.IMPORT_SHAPE: lambda: _(
            "This file is not a memory download. Choose a file made by “Download my memory”, "
            "or a plain text file with one note per line."
        ),
        ErrorCode.IMPORT_EMPTY: lambda: _("The file has no notes in it."),
        ErrorCode.IMPORT_VERSION: lambda: _(
            "This file was made by a newer version of this site and can’t be read here."
        ),
        ErrorCode.PINNED_TOO_LONG: lambda: (
            _(
                "Pinned notes may take up to %(limit)s characters of what the agent reads; with "
                "this one they would take %(count)s. Shorten a pinned note or unpin one, then try "
                "again."
            )
            % params
        ),
        ErrorCode.PINNED: lambda: _(
            "This note is pinned: only you can change it. Unpin it first if the agent should "
            "manage it."
        ),
        ErrorCode.MEMORY_OFF: lambda: _(
            "Memory is off, so the agent neither sees nor saves notes. Turn it on at the top of "
            "your memory screen."
        ),
        ErrorCode.TEMPORARY_CHAT: lambda: _(
            "This is a temporary chat: nothing in it is read from or saved to memory."
        ),
        ErrorCode.VALID_UNTIL: lambda: _(
            "Give the date as day, month and year, or leave it empty."
        ),
        ErrorCode.VALID_UNTIL_PAST: lambda: _(
            "This date has already passed. Choose a later date, or leave it empty."
        ),
        ErrorCode.VALID_UNTIL_FAR: lambda: _(
            "A note can be valid for at most 10 years. Choose an earlier date, or leave it empty."
        ),
        ErrorCode.IMPORT_BUSY: lambda: _(
            "Your memory changed during the import, so nothing was imported. Try again."
        ),
        ErrorCode.TOO_MANY_IMPORTS: lambda: _(
            "Many imports are running on this site right now, so nothing was imported. Try "
            "again in a few seconds."
        ),
        ErrorCode.CONTENT_INVISIBLE: lambda: _(
            "The text is made only of invisible characters. Write what to remember."
        ),
        ErrorCode.CATEGORY_INVISIBLE: lambda: _(
            "A category is made only of invisible characters. Give it a name you can read."
        ),
        ErrorCode.IMPORT_TOO_LARGE: lambda: _(
            "The file is larger than 1 MB. A memory download is much smaller: check it is the "
            "right file."
        ),
        ErrorCode.IMPORT_TOO_MANY_NOTES: lambda: (
            _(
                "The file has %(added)s new notes, but your memory has room for %(free)s more "
                "(%(count)s of %(limit)s are saved). Delete notes you no longer need, or import "
                "a shorter file."
            )
            % params
        ),
        ErrorCode.IMPORT_TOO_MANY_CHARS: lambda: (
            _(
                "The file’s new notes need %(added)s characters, but your memory has room for "
                "%(free)s more (%(count)s of %(limit)s are used). Delete notes you no longer "
                "need, or import a shorter file."
            )
            % params
        ),
    }
    make = simple.get(code)
    return make() if make is not None else None


def _has_room(params: dict[str, Any]) -> bool:
    """Whether a refused write had room for part of what it adds (the figures say how much):
    then the message gives what is free and what is needed, not "memory is full"."""
    count, limit, added = params.get("count"), params.get("limit"), params.get("added")
    if not (isinstance(count, int) and isinstance(limit, int) and isinstance(added, int)):
        return False
    if count >= limit:
        return False
    params.update(free=limit - count, over=count + added - limit)
    return True


def person_message(error: AgentMemoryError, existing: Any = None) -> str:
    """The error in the person's words and language; ``existing`` is the note a duplicate
    repeats, when known (its categories are named)."""
    params = dict(error.params)
    if isinstance(error, LimitReached):
        params.update(count=error.count, limit=error.limit, added=error.added)
    if isinstance(error, DuplicateNote) or error.code == ErrorCode.DUPLICATE:
        if existing is not None:
            text = _(
                "This text is already saved in another note (%(categories)s). Edit that note "
                "instead, or change the text."
            ) % {"categories": ", ".join(existing.categories)}
        else:
            text = _("This text is already saved in another note. Edit that note instead.")
    else:
        text = _message_for_code(error.code, params) or _(
            "This can’t be saved. Check the text and the categories, then try again."
        )
    number = params.get("note_number")
    if number:
        return _("Note %(number)s in the file: %(message)s") % {"number": number, "message": text}
    return text


def revert_message(error: AgentMemoryError) -> str:
    """Why a merge cannot be reverted, in one clear sentence that says what to do."""
    if error.kind == "conflict":
        return _(
            "This merge can’t be reverted: the merged note was changed or deleted after the "
            "merge. Edit your notes by hand instead."
        )
    if error.kind == "limit_reached":
        return _(
            "Reverting would bring back more notes than your memory can hold. Delete a few "
            "notes you no longer need, then press “Revert” again."
        )
    if error.kind == "duplicate":
        return _(
            "One of the original notes has been saved again since the merge, so reverting "
            "would duplicate it. Delete that note, then press “Revert” again."
        )
    if error.kind == "not_found":
        return _("This merge can no longer be reverted: it was already reverted or has expired.")
    return error.message


__all__ = [
    "CATEGORY_CODES",
    "CONTENT_CODES",
    "VALID_UNTIL_CODES",
    "field_of",
    "person_message",
    "revert_message",
    "too_long",
]
