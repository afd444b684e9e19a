"""The note rules: validation, secrets, duplicates, spelling and limits.

Plain Python over :class:`~agent_memory.notes.Note` values, so every entry point (the tool, the
HTTP API, the screen, the admin, the optimizer) applies exactly the same checks. The checks that
depend on a person's other notes take them as a :class:`NoteSet` (the counts the limits need and
a lookup of the notes with a given text) or as a plain list; stores call them inside their write
transaction, under the per-user lock. Secrets are looked for in the text being written only.

By job: :mod:`.fields` (a note's categories and text, and one spelling per category),
:mod:`.characters` (what a note never holds), :mod:`.values` (ids, versions, origins, ends),
:mod:`.batches` (a create's notes), :mod:`.duplicates` (text keys and :class:`NoteSet`) and
:mod:`.checks` (a write against the person's notes). Everything is importable from here.
"""

from __future__ import annotations

from ..secrets import find_secret
from .batches import clean_batch
from .characters import BIDI_CONTROLS, BLANK_CHARACTERS, has_visible_character
from .checks import check_batch_size, check_create, check_room, check_update
from .duplicates import (
    NoteList,
    Notes,
    NoteSet,
    category_keys,
    find_duplicate,
    is_duplicate,
    note_set,
    text_digest,
    text_key,
)
from .fields import (
    MAX_CATEGORIES,
    MAX_CATEGORY_CHARS,
    MAX_CONTENT_CHARS,
    NoteCleaner,
    category_key,
    clean_categories,
    clean_content,
    clean_note,
    same_spelling,
    spelled_like,
)
from .values import (
    MAX_ID,
    MAX_VALIDITY,
    ORIGIN_MAX_CHARS,
    clean_id,
    clean_origin,
    clean_valid_until,
    clean_version,
    end_of_day,
    parse_id,
    parse_note_id,
)

__all__ = [
    "BIDI_CONTROLS",
    "BLANK_CHARACTERS",
    "MAX_CATEGORIES",
    "MAX_CATEGORY_CHARS",
    "MAX_CONTENT_CHARS",
    "MAX_ID",
    "MAX_VALIDITY",
    "ORIGIN_MAX_CHARS",
    "NoteCleaner",
    "NoteList",
    "NoteSet",
    "Notes",
    "category_key",
    "category_keys",
    "check_batch_size",
    "check_create",
    "check_room",
    "check_update",
    "clean_batch",
    "clean_categories",
    "clean_content",
    "clean_id",
    "clean_note",
    "clean_origin",
    "clean_valid_until",
    "clean_version",
    "end_of_day",
    "find_duplicate",
    "find_secret",
    "has_visible_character",
    "is_duplicate",
    "note_set",
    "parse_id",
    "parse_note_id",
    "same_spelling",
    "spelled_like",
    "text_digest",
    "text_key",
]
