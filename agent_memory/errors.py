"""Errors raised by the memory core.

Every error a person or the model can cause is an :class:`AgentMemoryError` with a stable
``kind`` (the ``kind`` of the ``{"error": {"kind", "message"}}`` answers) and a human ``message``
that says what to do next. Configuration mistakes are separate: they are programming errors
and are raised at construction time.
"""

from __future__ import annotations

from django.utils.translation import gettext

#: Seconds a client is asked to wait (``Retry-After``) after a database failure answered 503.
RETRY_AFTER_SECONDS = 5


class AgentMemoryError(Exception):
    """Base class of the errors a memory operation can answer with."""

    kind: str = "invalid"

    def __init__(self, message: str, *, code: str = "", **params: object) -> None:
        super().__init__(message)
        self.message = str(message)
        #: What exactly is wrong (e.g. ``"content_too_long"``), with the figures in ``params``,
        #: so a screen can say it in its own words; ``message`` is worded for the model.
        self.code = code or self.kind
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
            gettext("Note {number} of {count}: {message}").format(
                number=number, count=count, message=self.message
            ),
            code=self.code,
            note_number=number,
            **self.params,
        )


class DuplicateNote(AgentMemoryError):
    """The same text is already saved in a shared category (kind ``duplicate``)."""

    kind = "duplicate"

    def __init__(self, message: str, existing_id: int | None = None, **params: object) -> None:
        super().__init__(message, code="duplicate", **params)
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
        code: str = "",
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
                "There is no note memory:{id}. Search memory again to find the note you mean."
            ).format(id=note_id)
        )

    @classmethod
    def for_merge(cls, run_id: object, group: int | None = None) -> NoteNotFound:
        """No revertable merge ``run_id`` (or no group ``group`` of it) for this person."""
        if group is None:
            message = gettext(
                "There is no merge {run} to revert: it was reverted, expired or never existed. "
                "Reload the list of merges."
            ).format(run=run_id)
        else:
            message = gettext(
                "There is no group {group} of merge {run} to revert: it was reverted, expired or "
                "never existed. Reload the list of merges."
            ).format(group=group, run=run_id)
        return cls(message, run_id=run_id, group=group)


class StaleVersion(AgentMemoryError):
    """The note changed since the caller read it (kind ``stale_version``)."""

    kind = "stale_version"

    @classmethod
    def for_note(cls, note_id: int, sent: int, current: int) -> StaleVersion:
        return cls(
            gettext(
                "memory:{id} changed since you read it (you sent version {sent}, it is now "
                "version {current}). Search for it again, then retry with the current version."
            ).format(id=note_id, sent=sent, current=current)
        )


class MergeConflict(AgentMemoryError):
    """A merge cannot be reverted because a merged note changed after it (kind ``conflict``)."""

    kind = "conflict"

    @classmethod
    def for_merged_note(cls, note_id: int) -> MergeConflict:
        return cls(
            gettext(
                "memory:{id} was changed or deleted after the merge, so reverting would lose "
                "that change. Edit the notes by hand instead."
            ).format(id=note_id),
            note_id=note_id,
        )


class LeaseExpired(AgentMemoryError):
    """An optimizer run lost its lease (it took too long): its late result is discarded."""

    kind = "conflict"

    @classmethod
    def for_run(cls, run_id: int) -> LeaseExpired:
        return cls(
            gettext("Optimization run {run} no longer holds its lease.").format(run=run_id),
            code="lease_expired",
            run_id=run_id,
        )


class ReadOnlyNote(AgentMemoryError):
    """The agent tried to change or delete a note the person pinned (kind ``read_only``)."""

    kind = "read_only"

    @classmethod
    def for_pinned(cls, note_id: int) -> ReadOnlyNote:
        return cls(
            gettext(
                "The person pinned memory:{id}: you can read it, not change it. Suggest the "
                "change to the person, who can edit it on their memory screen."
            ).format(id=note_id),
            code="pinned",
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
            code="memory_off",
        )

    @classmethod
    def temporary(cls) -> MemoryDisabled:
        return cls(
            gettext(
                "This is a temporary chat: memory is neither read nor saved in it. Do not bring "
                "memory up; carry on with the conversation without it."
            ),
            code="temporary_chat",
        )


class MemoryStorageNotSupportedError(TypeError):
    """The store lacks methods that the requested feature needs."""

    def __init__(self, missing: list[str] | tuple[str, ...], feature: str = "memory") -> None:
        self.missing = tuple(missing)
        super().__init__(
            f"The store does not support {feature}: it lacks {', '.join(self.missing)}. "
            "Implement these methods (see agent_memory.stores.base) or use DjangoStore."
        )


class ToolNameConflictError(ValueError):
    """An app tool uses the name reserved for the memory tool."""


__all__ = [
    "AgentMemoryError",
    "DuplicateNote",
    "InvalidNote",
    "LeaseExpired",
    "LimitReached",
    "MemoryDisabled",
    "MemoryStorageNotSupportedError",
    "MergeConflict",
    "NoteNotFound",
    "ReadOnlyNote",
    "StaleVersion",
    "ToolNameConflictError",
]
