"""Errors raised by the memory core.

Every error a person or the model can cause is an :class:`AgentMemoryError` with a stable
``kind`` (the ``kind`` of the ``{"error": {"kind", "message"}}`` answers) and a human ``message``
that says what to do next. Configuration mistakes are separate: they are programming errors
and are raised at construction time.
"""

from __future__ import annotations

from enum import StrEnum

from django.utils.translation import gettext

#: Seconds a client is asked to wait (``Retry-After``) after a database failure answered 503.
RETRY_AFTER_SECONDS = 5
#: Seconds a client is asked to wait (``Retry-After``) before trying an import again when the
#: site already runs as many imports as it allows at once (one takes well under a second).
IMPORT_RETRY_AFTER_SECONDS = 2


class ErrorCode(StrEnum):
    """What exactly is wrong with a write: the one vocabulary of :attr:`AgentMemoryError.code`.

    The rules raise these and :mod:`~agent_memory.wording` words them for a person, so a code
    mistyped on either side is an error for mypy (and a ``TypeError`` when raised), never a
    generic message. A member is its own string (``ErrorCode.SECRET == "secret"``), so it can be
    a Django ``ValidationError`` code too. An error raised without a code has its kind's.
    """

    # The kinds, the code of an error that says no more than its kind.
    INVALID = "invalid"
    DUPLICATE = "duplicate"
    LIMIT_REACHED = "limit_reached"
    NOT_FOUND = "not_found"
    STALE_VERSION = "stale_version"
    CONFLICT = "conflict"
    READ_ONLY = "read_only"
    DISABLED = "disabled"
    BUSY = "busy"
    # A call's shape: ids, versions, origins, a create's notes.
    ID_SHAPE = "id_shape"
    VERSION_SHAPE = "version_shape"
    ORIGIN_SHAPE = "origin_shape"
    NOTES_SHAPE = "notes_shape"
    BATCH_SIZE = "batch_size"
    # A note's text.
    CONTENT_SHAPE = "content_shape"
    CONTENT_EMPTY = "content_empty"
    CONTENT_TOO_LONG = "content_too_long"
    CONTENT_UNPRINTABLE = "content_unprintable"
    CONTENT_INVISIBLE = "content_invisible"
    SECRET = "secret"
    # A note's categories.
    CATEGORIES_SHAPE = "categories_shape"
    CATEGORIES_COUNT = "categories_count"
    CATEGORY_EMPTY = "category_empty"
    CATEGORY_SECRET = "category_secret"
    CATEGORY_TOO_LONG = "category_too_long"
    CATEGORY_UNPRINTABLE = "category_unprintable"
    CATEGORY_INVISIBLE = "category_invisible"
    CATEGORY_SLASH = "category_slash"
    CATEGORY_REPEATED = "category_repeated"
    # A note's end.
    VALID_UNTIL = "valid_until"
    VALID_UNTIL_PAST = "valid_until_past"
    VALID_UNTIL_FAR = "valid_until_far"
    # The limits (:class:`LimitReached`).
    TOO_MANY_NOTES = "too_many_notes"
    TOO_MANY_CHARS = "too_many_chars"
    PINNED_TOO_LONG = "pinned_too_long"
    # Pins and the memory switch.
    PINNED = "pinned"
    PINNED_BY_AGENT = "pinned_by_agent"
    PINNED_SHAPE = "pinned_shape"
    ENABLED_SHAPE = "enabled_shape"
    MEMORY_OFF = "memory_off"
    TEMPORARY_CHAT = "temporary_chat"
    # Import.
    IMPORT_TOO_LARGE = "import_too_large"
    IMPORT_UNREADABLE = "import_unreadable"
    IMPORT_SHAPE = "import_shape"
    IMPORT_EMPTY = "import_empty"
    IMPORT_VERSION = "import_version"
    IMPORT_TOO_MANY_NOTES = "import_too_many_notes"
    IMPORT_TOO_MANY_CHARS = "import_too_many_chars"
    IMPORT_BUSY = "import_busy"
    TOO_MANY_IMPORTS = "too_many_imports"
    # The optimizer.
    LEASE_EXPIRED = "lease_expired"


class AgentMemoryError(Exception):
    """Base class of the errors a memory operation can answer with."""

    kind: str = "invalid"

    def __init__(self, message: str, *, code: ErrorCode | None = None, **params: object) -> None:
        if code is not None and not isinstance(code, ErrorCode):
            raise TypeError(
                f"code must be a member of agent_memory.errors.ErrorCode, not {code!r}: add the "
                "code there (and its words for a person in agent_memory.wording)."
            )
        super().__init__(message)
        self.message = str(message)
        #: What exactly is wrong (e.g. ``ErrorCode.CONTENT_TOO_LONG``), with the figures in
        #: ``params``, so a screen can say it in its own words; ``message`` is worded for the
        #: model.
        self.code: ErrorCode = code or ErrorCode(self.kind)
        self.params = params

    def as_dict(self) -> dict[str, dict[str, str]]:
        """The error as the JSON body used by the tool and the HTTP API."""
        return {"error": {"kind": self.kind, "message": self.message}}


class InvalidNote(AgentMemoryError):
    """The input does not describe a valid note or call (kind ``invalid``)."""

    kind = "invalid"

    def in_batch(self, number: int, count: int) -> InvalidNote:
        """This error for note ``number`` (from 1) of ``count`` sent together: the message says
        which note; the code and its figures stay."""
        return InvalidNote(
            gettext("Note %(number)s of %(count)s: %(message)s")
            % {"number": number, "count": count, "message": self.message},
            code=self.code,
            note_number=number,
            **self.params,
        )


class DuplicateNote(AgentMemoryError):
    """The same text is already saved in a shared category (kind ``duplicate``)."""

    kind = "duplicate"

    def __init__(self, message: str, existing_id: int | None = None, **params: object) -> None:
        super().__init__(message, code=ErrorCode.DUPLICATE, **params)
        self.existing_id = existing_id


class LimitReached(AgentMemoryError):
    """The write would pass ``MAX_NOTES`` or ``MAX_TOTAL_CHARS`` (kind ``limit_reached``).

    A create of more than ``MAX_BATCH`` notes is malformed input instead: :class:`InvalidNote`.
    The figures come with it: ``count`` of ``limit`` notes (code ``too_many_notes``) or
    characters (``too_many_chars``) are used, and the write would add ``added``.
    """

    kind = "limit_reached"

    def __init__(
        self,
        message: str,
        *,
        code: ErrorCode | None = None,
        count: int | None = None,
        limit: int | None = None,
        added: int | None = None,
        **params: object,
    ) -> None:
        figures = {"count": count, "limit": limit, "added": added}
        super().__init__(
            message,
            code=code,
            **{name: value for name, value in figures.items() if value is not None},
            **params,
        )
        self.count = count
        self.limit = limit
        self.added = added


class NoteNotFound(AgentMemoryError):
    """No such note for this person (another person's note looks exactly the same)."""

    kind = "not_found"

    @classmethod
    def for_id(cls, note_id: int) -> NoteNotFound:
        return cls(
            gettext(
                "There is no note memory:%(id)s. Search memory again to find the note you mean."
            )
            % {"id": note_id}
        )

    @classmethod
    def for_merge(cls, run_id: object, group: int | None = None) -> NoteNotFound:
        """No revertable merge ``run_id`` (or no group ``group`` of it) for this person."""
        if group is None:
            message = gettext(
                "There is no merge %(run)s to revert: it was reverted, expired or never "
                "existed. Reload the list of merges."
            ) % {"run": run_id}
        else:
            message = gettext(
                "There is no group %(group)s of merge %(run)s to revert: it was reverted, "
                "expired or never existed. Reload the list of merges."
            ) % {"group": group, "run": run_id}
        return cls(message, run_id=run_id, group=group)


class StaleVersion(AgentMemoryError):
    """The note changed since the caller read it (kind ``stale_version``)."""

    kind = "stale_version"

    @classmethod
    def for_note(cls, note_id: int, sent: int, current: int) -> StaleVersion:
        return cls(
            gettext(
                "memory:%(id)s changed since you read it (you sent version %(sent)s, it is now "
                "version %(current)s). Search for it again, then retry with the current version."
            )
            % {"id": note_id, "sent": sent, "current": current}
        )


class MergeConflict(AgentMemoryError):
    """A merge cannot be reverted because a merged note changed after it (kind ``conflict``)."""

    kind = "conflict"

    @classmethod
    def for_merged_note(cls, note_id: int) -> MergeConflict:
        return cls(
            gettext(
                "memory:%(id)s was changed or deleted after the merge, so reverting would lose "
                "that change. Edit the notes by hand instead."
            )
            % {"id": note_id},
            note_id=note_id,
        )


class LeaseExpired(AgentMemoryError):
    """An optimizer run lost its lease (it took too long): its late result is discarded."""

    kind = "conflict"

    @classmethod
    def for_run(cls, run_id: int) -> LeaseExpired:
        return cls(
            gettext("Optimization run %(run)s no longer holds its lease.") % {"run": run_id},
            code=ErrorCode.LEASE_EXPIRED,
            run_id=run_id,
        )


class ReadOnlyNote(AgentMemoryError):
    """The agent tried to change or delete a note the person pinned (kind ``read_only``)."""

    kind = "read_only"

    @classmethod
    def for_pinned(cls, note_id: int) -> ReadOnlyNote:
        return cls(
            gettext(
                "The person pinned memory:%(id)s: you can read it, not change it. Suggest the "
                "change to the person, who can edit it on their memory screen."
            )
            % {"id": note_id},
            code=ErrorCode.PINNED,
            note_id=note_id,
        )


class MemoryDisabled(AgentMemoryError):
    """Memory is off for this person, or the chat is temporary (kind ``disabled``)."""

    kind = "disabled"

    @classmethod
    def switched_off(cls) -> MemoryDisabled:
        return cls(
            gettext(
                "The person turned memory off: nothing is read or saved. Do not bring memory up; "
                "carry on with the conversation without it."
            ),
            code=ErrorCode.MEMORY_OFF,
        )

    @classmethod
    def temporary(cls) -> MemoryDisabled:
        return cls(
            gettext(
                "This is a temporary chat: memory is neither read nor saved in it. Do not bring "
                "memory up; carry on with the conversation without it."
            ),
            code=ErrorCode.TEMPORARY_CHAT,
        )


class TooManyImports(AgentMemoryError):
    """The site already runs ``MAX_CONCURRENT_IMPORTS`` imports at once (kind ``busy``):
    nothing was read or written; try again in :attr:`retry_after` seconds."""

    kind = "busy"

    def __init__(self, message: str, *, retry_after: int, **params: object) -> None:
        super().__init__(
            message, code=ErrorCode.TOO_MANY_IMPORTS, retry_after=retry_after, **params
        )
        self.retry_after = retry_after

    @classmethod
    def for_slots(cls, slots: int) -> TooManyImports:
        return cls(
            gettext(
                "Too many imports are running on this site right now (it runs at most %(slots)s "
                "at once), so this one was not started and nothing was imported. Try again in "
                "%(seconds)s seconds."
            )
            % {"slots": slots, "seconds": IMPORT_RETRY_AFTER_SECONDS},
            retry_after=IMPORT_RETRY_AFTER_SECONDS,
            slots=slots,
        )


class MemoryStorageNotSupportedError(TypeError):
    """The store lacks methods that the requested feature needs."""

    def __init__(
        self, missing: list[str] | tuple[str, ...], feature: str = "memory", *, message: str = ""
    ) -> None:
        self.missing = tuple(missing)
        super().__init__(
            message
            or f"The store does not support {feature}: it lacks {', '.join(self.missing)}. "
            "Implement these methods (see agent_memory.stores.base) or use DjangoStore."
        )

    @classmethod
    def not_a_store(cls, store: object) -> MemoryStorageNotSupportedError:
        """``store`` is not an instance of :class:`~agent_memory.stores.base.BaseStore`."""
        return cls(
            (),
            message=f"{type(store).__name__} is not a memory store: subclass "
            "agent_memory.stores.base.BaseStore and write its note methods (list_notes, "
            "insert_notes, update_note, delete_note, clear_notes), or use DjangoStore.",
        )


class ToolNameConflictError(ValueError):
    """An app tool uses the name reserved for the memory tool."""


__all__ = [
    "AgentMemoryError",
    "DuplicateNote",
    "ErrorCode",
    "InvalidNote",
    "LeaseExpired",
    "LimitReached",
    "MemoryDisabled",
    "MemoryStorageNotSupportedError",
    "MergeConflict",
    "NoteNotFound",
    "ReadOnlyNote",
    "StaleVersion",
    "TooManyImports",
    "ToolNameConflictError",
]
