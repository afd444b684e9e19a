"""Plain values the optimizer and the stores exchange, and the backoff policy.

No Django here: a custom store can import these without pulling in the ORM.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from ..errors import AgentMemoryError
from ..notes import NewNote, Note

#: Version of the JSON stored with runs and snapshots.
SCHEMA_VERSION = 1

#: Waits after the 1st, 2nd, 3rd and later failures in a row.
BACKOFF = (timedelta(hours=1), timedelta(hours=6), timedelta(hours=24))

#: The optional store methods for per-person optimizer state (beside the merge methods).
STATE_METHODS = (
    "record_optimizer_activity",
    "get_optimizer_state",
    "due_optimizer_users",
)


def backoff_delay(consecutive_failures: int) -> timedelta:
    """How long to wait after ``consecutive_failures`` failed runs in a row (1 or more)."""
    index = min(max(consecutive_failures, 1), len(BACKOFF)) - 1
    return BACKOFF[index]


class LeaseExpired(AgentMemoryError):
    """The run lost its lease (it took too long): its late result is discarded."""

    kind = "conflict"


@dataclass(frozen=True)
class OptimizationRun:
    """One run as a store reports it."""

    id: int
    user_id: Any
    status: str
    model: str
    started_at: datetime
    lease_expires_at: datetime
    finished_at: datetime | None = None
    reverted_at: datetime | None = None
    applied: list[dict[str, Any]] = field(default_factory=list)
    rejected: list[dict[str, Any]] = field(default_factory=list)
    error: str = ""


@dataclass(frozen=True)
class OptimizerStateRecord:
    """A person's optimizer state."""

    consecutive_failures: int = 0
    next_run_at: datetime | None = None
    last_success_at: datetime | None = None
    last_activity_at: datetime | None = None
    model: str = ""


@dataclass(frozen=True)
class MergePlan:
    """One checked group to apply: the sources at the versions the model saw, and the new note."""

    group_index: int
    sources: dict[int, int]  # note id -> version seen by the model
    note: NewNote


@dataclass(frozen=True)
class MergedNote:
    """One applied group still revertable: the merged note's id/version and the sources."""

    run_id: int
    group_index: int
    merged_note_id: int
    merged_version: int
    sources: tuple[Note, ...]
    created_at: datetime


@dataclass(frozen=True)
class RunOutcome:
    """What the runner hands to ``finish_optimization_run``."""

    succeeded: bool
    proposals: dict[str, Any] = field(default_factory=dict)
    applied: list[dict[str, Any]] = field(default_factory=list)
    rejected: list[dict[str, Any]] = field(default_factory=list)
    error: str = ""


#: ``check(current notes except the sources, the sources)``: raise to refuse applying a group.
ApplyCheck = Callable[[list[Note], list[Note]], None]
#: ``check(notes that stay after removing the merged notes, the originals to restore)``.
RevertCheck = Callable[[list[Note], list[Note]], None]


def note_to_json(note: Note) -> dict[str, Any]:
    return {
        "id": note.id,
        "version": note.version,
        "categories": list(note.categories),
        "content": note.content,
        "source": note.source,
        "created_at": note.created_at.isoformat(),
        "updated_at": note.updated_at.isoformat(),
    }


def note_from_json(user_id: Any, data: dict[str, Any]) -> Note:
    return Note(
        id=int(data["id"]),
        user_id=user_id,
        categories=tuple(data["categories"]),
        content=data["content"],
        version=int(data["version"]),
        source=data.get("source", "agent"),
        created_at=datetime.fromisoformat(data["created_at"]),
        updated_at=datetime.fromisoformat(data["updated_at"]),
    )


def snapshot_json(notes: list[Note]) -> dict[str, Any]:
    """The sources of one group as stored in a snapshot."""
    return {"schema": SCHEMA_VERSION, "notes": [note_to_json(note) for note in notes]}


def snapshot_notes(user_id: Any, data: dict[str, Any]) -> tuple[Note, ...]:
    return tuple(note_from_json(user_id, item) for item in data.get("notes", []))


def erased_rejections(rejected: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rejections without their human reasons (which may quote note text), for erase-all."""
    return [
        {key: value for key, value in item.items() if key not in ("reason",)} for item in rejected
    ]


ERASED_PROPOSALS: dict[str, Any] = {"schema": SCHEMA_VERSION, "erased": True}
