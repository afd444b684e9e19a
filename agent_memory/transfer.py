"""Export and import of a person's memory (``LongTermMemory.export`` / ``import_notes``).

An export is a JSON document with a schema version; an import takes such a document, a list
of ``{"categories", "content"}`` objects, or plain text with one note per line. Plain Python:
the memory core calls it, the API and the screen only read files and bodies.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from django.utils import timezone
from django.utils.translation import gettext

from . import rules
from .conf import Limits
from .errors import ErrorCode, InvalidNote, LimitReached
from .notes import NewNote, Note

#: ``format`` of an export document: says what the file is.
EXPORT_FORMAT = "agent_memory"
#: ``version`` of the export schema this code writes and reads.
EXPORT_VERSION = 1
#: The largest import read at all, in bytes (1 MB). A full memory (``MAX_NOTES`` notes of at most
#: 500 characters, with their categories and dates) exports to well under this; a larger body is
#: refused before it is read or parsed.
MAX_IMPORT_BYTES = 1_000_000

# "- text", "* text", "• text", "1. text": list markers people paste along with their notes.
_LIST_MARKER = re.compile(r"^(?:[-*•·–—]|\d{1,3}[.)])\s+")


@dataclass(frozen=True)
class ImportResult:
    """What an import did: the notes it ``created`` and the ones it ``skipped``, each
    ``{"content", "reason"}`` (already saved, or repeated earlier in the same import)."""

    created: list[Note] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """The HTTP API's answer: ``{"created": N, "skipped": [{"content", "reason"}]}``."""
        return {"created": len(self.created), "skipped": [dict(item) for item in self.skipped]}


def export_document(notes: Sequence[Note], exported_at: datetime) -> dict[str, Any]:
    """The person's notes as a JSON-serialisable, versioned document, oldest first (so an
    import recreates them in the order they were written)."""
    ordered = sorted(notes, key=lambda note: (note.created_at, note.id))
    return {
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "exported_at": exported_at.isoformat(),
        "notes": [
            {
                "categories": list(note.categories),
                "content": note.content,
                "source": note.source,
                "pinned": note.pinned,
                "created_by": note.created_by,
                "created_at": note.created_at.isoformat(),
                "updated_at": note.updated_at.isoformat(),
                "valid_until": None if note.valid_until is None else note.valid_until.isoformat(),
            }
            for note in ordered
        ],
    }


def check_import_size(size: int) -> None:
    """Raise :class:`InvalidNote` if an import of ``size`` bytes is past :data:`MAX_IMPORT_BYTES`
    (callers pass the body's declared length, before reading it)."""
    if size > MAX_IMPORT_BYTES:
        raise InvalidNote(
            gettext(
                "The import is {size} bytes; at most 1 MB ({max} bytes) is read. A download of "
                "a full memory is much smaller: check it is the right file, or split it."
            ).format(size=size, max=MAX_IMPORT_BYTES),
            code=ErrorCode.IMPORT_TOO_LARGE,
            size=size,
            max=MAX_IMPORT_BYTES,
        )


def parse_text(text: str) -> Any:
    """Read an uploaded file or body: an export (JSON) if it looks like JSON, else one note
    per line. Returns what :func:`import_items` takes. Text past :data:`MAX_IMPORT_BYTES` (in
    UTF-8) is refused before it is parsed."""
    if len(text) > MAX_IMPORT_BYTES:
        check_import_size(len(text))
    check_import_size(len(text.encode("utf-8", "surrogatepass")))
    stripped = text.lstrip("\ufeff").strip()
    if stripped.startswith(("{", "[")):
        try:
            return json.loads(stripped)
        except (ValueError, RecursionError):
            raise InvalidNote(
                gettext(
                    "The file looks like JSON but cannot be read. Choose a file made by "
                    '"Download my memory", or a plain text file with one note per line.'
                ),
                code=ErrorCode.IMPORT_UNREADABLE,
            ) from None
    return stripped


def import_items(data: Any, categories: Sequence[str] | None = None) -> list[Mapping[str, Any]]:
    """The notes an import holds, as ``{"categories", "content"[, "source"]}`` mappings.

    ``data``: an export document, a list of notes, or text with one note per line; lines get
    ``categories`` (default: "Imported", in the current language).
    """
    if isinstance(data, str):
        if len(data) > MAX_IMPORT_BYTES:
            check_import_size(len(data.encode("utf-8", "surrogatepass")))
        line_categories = list(categories) if categories else [gettext("Imported")]
        lines = [_LIST_MARKER.sub("", line.strip()) for line in data.splitlines()]
        items: Any = [
            {"categories": line_categories, "content": line} for line in lines if line.strip()
        ]
    elif isinstance(data, Mapping):
        _check_document(data)
        items = data.get("notes")
    else:
        items = data
    if not isinstance(items, (list, tuple)):
        raise InvalidNote(
            gettext(
                'An import is an export document {{"version": 1, "notes": [...]}}, a list of '
                '{{"categories": [...], "content": "..."}}, or text with one note per line.'
            ),
            code=ErrorCode.IMPORT_SHAPE,
        )
    if not items:
        raise InvalidNote(gettext("There are no notes to import."), code=ErrorCode.IMPORT_EMPTY)
    for number, item in enumerate(items, start=1):
        if not isinstance(item, Mapping):
            raise InvalidNote(
                gettext(
                    'Note {number} of {count} must be an object {{"categories": [...], '
                    '"content": "..."}}.'
                ).format(number=number, count=len(items)),
                code=ErrorCode.IMPORT_SHAPE,
            )
    return list(items)


def _check_document(data: Mapping[str, Any]) -> None:
    kind = data.get("format", EXPORT_FORMAT)
    version = data.get("version", EXPORT_VERSION)
    if kind != EXPORT_FORMAT or "notes" not in data:
        raise InvalidNote(
            gettext(
                'This is not a memory export: it needs "format": "{format}" and a list of "notes".'
            ).format(format=EXPORT_FORMAT),
            code=ErrorCode.IMPORT_SHAPE,
        )
    if isinstance(version, bool) or not isinstance(version, int) or version > EXPORT_VERSION:
        raise InvalidNote(
            gettext(
                "This export has schema version {version}; this site reads version {supported}. "
                "Update the app, or export again from a site with this version."
            ).format(version=version, supported=EXPORT_VERSION),
            code=ErrorCode.IMPORT_VERSION,
            version=str(version),
        )


def text_keys(items: Sequence[Mapping[str, Any]]) -> list[str | None]:
    """The folded text (:func:`~agent_memory.rules.text_key`) of each item's ``content``, or
    ``None`` where it is not text. Folded once per import: stripping a text (as cleaning it
    does) leaves its folded form as it was, so the room check and the plan share these."""
    return [
        rules.text_key(content) if isinstance(content := item.get("content"), str) else None
        for item in items
    ]


def check_import_room(
    items: Sequence[Mapping[str, Any]],
    existing: Sequence[Note],
    limits: Limits,
    keys: Sequence[str | None] | None = None,
) -> None:
    """Raise :class:`LimitReached` if the notes of an import that are not saved already cannot
    fit ``MAX_NOTES`` or ``MAX_TOTAL_CHARS``: before any note is checked, so a file far too large
    costs one pass over its texts. Notes already saved, or repeated in the import, need no room
    (judged on the raw texts and categories, as the plan will judge the cleaned ones). ``keys``:
    the items' :func:`text_keys`, if already folded."""
    saved: dict[str, set[str]] = {}
    for note in existing:
        saved.setdefault(rules.text_key(note.content), set()).update(
            rules.category_keys(note.categories)
        )
    needed = needed_chars = 0
    # Lines of a text file all share one list of categories: fold each list once.
    folded: dict[tuple[str, ...], frozenset[str]] = {}
    for item, key in zip(items, text_keys(items) if keys is None else keys, strict=True):
        content, categories = item.get("content"), item.get("categories")
        if key is not None and isinstance(categories, (list, tuple)):
            given = tuple(name for name in categories if isinstance(name, str))
            names = folded.get(given)
            if names is None:
                names = folded[given] = rules.category_keys(given)
            held = saved.setdefault(key, set())
            if names & held:
                continue
            held.update(names)
        needed += 1
        needed_chars += len(content.strip()) if isinstance(content, str) else 0
    count = len(existing)
    free = max(limits.max_notes - count, 0)
    if needed > free:
        raise LimitReached(
            gettext(
                "This import needs room for {needed} new notes, but only {free} are free: "
                "{count} of {limit} notes are saved. Delete or merge old notes, or import fewer, "
                "then try again."
            ).format(needed=needed, free=free, count=count, limit=limits.max_notes),
            code=ErrorCode.IMPORT_TOO_MANY_NOTES,
            count=count,
            limit=limits.max_notes,
            added=needed,
            free=free,
        )
    chars = sum(len(note.content) for note in existing)
    free_chars = max(limits.max_total_chars - chars, 0)
    if needed_chars > free_chars:
        raise LimitReached(
            gettext(
                "This import needs {needed} characters for its new notes, but only {free} are "
                "free: {count} of {limit} characters are used. Delete or merge old notes, or "
                "import fewer, then try again."
            ).format(
                needed=needed_chars, free=free_chars, count=chars, limit=limits.max_total_chars
            ),
            code=ErrorCode.IMPORT_TOO_MANY_CHARS,
            count=chars,
            limit=limits.max_total_chars,
            added=needed_chars,
            free=free_chars,
        )


def clean_items(items: Sequence[Mapping[str, Any]], source: str) -> list[NewNote]:
    """Check every note like a create; the first bad one fails the import, saying which. A note
    exported pinned (``"pinned": true``) comes back pinned: the file is the person's.

    Every note gets ``source`` (an import records who imported it, whatever the file claims),
    keeps the file's ``created_at`` when it is a valid moment not in the future, and its
    ``valid_until`` (checked as on a create; one already past is kept here and skipped by
    :func:`plan_import`). Each distinct text and list of categories is checked once
    (:class:`~agent_memory.rules.NoteCleaner`)."""
    now = timezone.now()
    cleaner = rules.NoteCleaner(source)
    cleaned = []
    for number, item in enumerate(items, start=1):
        try:
            note = cleaner.clean(item.get("categories"), item.get("content"))
            until, moment = item.get("valid_until"), _moment(item.get("valid_until"), now)
            passed = moment is not None and moment <= now
            valid_until = moment if passed else rules.clean_valid_until(until, now)
        except InvalidNote as error:
            raise error.in_batch(number, len(items)) from None
        changes: dict[str, Any] = {}
        if valid_until is not None:
            changes["valid_until"] = valid_until
        created = _moment(item.get("created_at"), now)
        if created is not None and created <= now:
            changes["created_at"] = created
        if item.get("pinned") is True:
            changes["pinned"] = True
        cleaned.append(replace(note, **changes) if changes else note)
    return cleaned


def _moment(value: Any, now: datetime) -> datetime | None:
    """An aware moment from an ISO date-time text (an export's dates), else ``None``."""
    if not isinstance(value, str) or len(value) > 40:
        return None
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None


#: A planned note's folded text and categories: what a duplicate is judged on.
Folded = tuple[str, frozenset[str]]


def fold_notes(notes: Sequence[NewNote], keys: Sequence[str | None] | None = None) -> list[Folded]:
    """Each note's folded text and categories (:func:`~agent_memory.rules.text_key`,
    :func:`~agent_memory.rules.category_keys`), each distinct list of categories folded once.
    ``keys``: the texts' folded forms, if already known (:func:`text_keys` of the raw items)."""
    names: dict[tuple[str, ...], frozenset[str]] = {}
    folded = []
    for index, note in enumerate(notes):
        key = keys[index] if keys is not None else None
        categories = names.get(note.categories)
        if categories is None:
            categories = names[note.categories] = rules.category_keys(note.categories)
        folded.append((rules.text_key(note.content) if key is None else key, categories))
    return folded


def plan_import(
    existing: Sequence[Note],
    cleaned: Sequence[NewNote],
    folded: Sequence[Folded] | None = None,
) -> tuple[list[NewNote], list[dict[str, str]]]:
    """Which notes to create and which to skip: already saved, or repeated in the import.

    One pass: the saved notes and the planned ones are looked up by their folded text
    (:func:`~agent_memory.rules.text_key`), never compared pairwise. ``folded``: the cleaned
    notes' :func:`fold_notes`, if already folded."""
    saved: dict[str, list[Note]] = {}
    for held in existing:
        saved.setdefault(rules.text_key(held.content), []).append(held)
    # The categories of the planned notes with each folded text: a note sharing one of them
    # repeats a planned note.
    seen: dict[str, set[str]] = {}
    planned: list[NewNote] = []
    skipped: list[dict[str, str]] = []
    now = timezone.now()
    # Translated once, not once per skipped note (a file may repeat a note thousands of times).
    expired = gettext("No longer valid: it held until {moment}.")
    saved_as = gettext("Already saved (categories: {categories}).")
    repeated = gettext("Repeated earlier in the same import.")
    for note, (key, names) in zip(
        cleaned, fold_notes(cleaned) if folded is None else folded, strict=True
    ):
        same = saved.get(key)
        match = (
            next((old for old in same if rules.category_keys(old.categories) & names), None)
            if same
            else None
        )
        if note.valid_until is not None and note.valid_until <= now:
            reason = expired.format(moment=note.valid_until.isoformat())
            skipped.append({"content": note.content, "reason": reason})
        elif match is not None:
            reason = saved_as.format(categories=", ".join(match.categories))
            skipped.append({"content": note.content, "reason": reason})
        elif names & seen.get(key, set()):
            skipped.append({"content": note.content, "reason": repeated})
        else:
            planned.append(note)
            seen.setdefault(key, set()).update(names)
    return planned, skipped


@dataclass(frozen=True)
class ImportPlan:
    """An import checked like a create and planned against the notes saved: the ``planned``
    notes to create and the ``skipped`` ones (each ``{"content", "reason"}``).

    Made by :meth:`of` before the person's lock is taken; :meth:`against` plans it again with
    the notes the store sees under the lock, so a note saved meanwhile is skipped, not doubled.
    Each note is folded once (``folded``), for both plans.
    """

    cleaned: tuple[NewNote, ...]
    planned: list[NewNote]
    skipped: list[dict[str, str]]
    folded: tuple[Folded, ...] = ()

    @classmethod
    def of(
        cls,
        items: Sequence[Mapping[str, Any]],
        saved: Sequence[Note],
        limits: Limits,
        source: str,
    ) -> ImportPlan:
        """Plan the notes :func:`import_items` read, for a person with the ``saved`` notes.

        Too many for the room left is :class:`LimitReached` before any note is checked (or
        scanned for secrets); then every note is cleaned (:func:`clean_items`) and planned
        (:func:`plan_import`), its categories spelled as the person spells them
        (:func:`~agent_memory.rules.spelled_like`)."""
        keys = text_keys(items)
        check_import_room(items, saved, limits, keys)
        known = (name for note in saved for name in note.categories)
        cleaned = rules.spelled_like(clean_items(items, source), known)
        folded = fold_notes(cleaned, keys)
        planned, skipped = plan_import(saved, cleaned, folded)
        return cls(tuple(cleaned), planned, skipped, tuple(folded))

    def against(self, existing: rules.Notes) -> ImportPlan:
        """The same import planned with the notes saved now (as a write's check sees them)."""
        # Only the saved notes with the same texts can make an imported note a duplicate.
        # Each text once: a file may repeat a note many times.
        texts = list(dict.fromkeys(note.content for note in self.cleaned))
        same = rules.note_set(existing).with_texts(texts)
        planned, skipped = plan_import(list(same), self.cleaned, self.folded or None)
        return ImportPlan(self.cleaned, planned, skipped, self.folded)

    def check_room(self, existing: rules.Notes, limits: Limits) -> None:
        """Raise :class:`LimitReached` if the planned notes do not fit next to ``existing``."""
        chars = sum(len(note.content) for note in self.planned)
        rules.check_room(existing, len(self.planned), chars, limits)


__all__ = [
    "EXPORT_FORMAT",
    "EXPORT_VERSION",
    "MAX_IMPORT_BYTES",
    "ImportPlan",
    "ImportResult",
    "check_import_room",
    "check_import_size",
    "clean_items",
    "export_document",
    "fold_notes",
    "import_items",
    "parse_text",
    "plan_import",
    "text_keys",
]
