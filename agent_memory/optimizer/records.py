"""Plain values the optimizer and the stores exchange, and the backoff policy.

No Django here: a custom store can import these without pulling in the ORM.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from ..errors import AgentMemoryError
from ..kinds import NoteSource
from ..notes import NewNote, Note
from ..rules import parse_note_id

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
    #: The groups the person reverted: ``{"index", "merged_id", "source_ids"}`` each.
    reverted: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class OptimizerStateRecord:
    """A person's optimizer state."""

    consecutive_failures: int = 0
    next_run_at: datetime | None = None
    last_success_at: datetime | None = None
    last_activity_at: datetime | None = None
    model: str = ""
    #: Optimizer options given in code (``LongTermMemory(optimizer={...})``) with the last turn.
    options: dict[str, Any] = field(default_factory=dict)


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
        "origin": note.origin,
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
        source=data.get("source", NoteSource.AGENT),
        created_at=datetime.fromisoformat(data["created_at"]),
        updated_at=datetime.fromisoformat(data["updated_at"]),
        origin=data.get("origin", ""),
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


# --- deletion reaches every copy: snapshots and proposals forget a deleted note's text ----


#: Verbatim copies of a deleted note's text this long or longer are replaced wherever they are.
VERBATIM_MIN_CHARS = 8


def deleted_marker(note_id: int) -> str:
    """What stands in for a deleted note's text wherever a copy of it was kept."""
    return f"[deleted note memory:{note_id}]"


def _ids_of(values: Any) -> set[int]:
    if not isinstance(values, list):
        return set()
    return {number for value in values if (number := parse_note_id(value)) is not None}


def _replace_texts(value: Any, texts: list[tuple[str, str]]) -> Any:
    """``value`` (JSON) with every occurrence of each text replaced, ignoring case."""
    if isinstance(value, str):
        for text, marker in texts:
            # A very short text (“Yes.”) cannot be told apart from other words.
            if len(text) >= VERBATIM_MIN_CHARS and text.casefold() in value.casefold():
                value = re.sub(re.escape(text), marker, value, flags=re.IGNORECASE)
        return value
    if isinstance(value, list):
        return [_replace_texts(item, texts) for item in value]
    if isinstance(value, dict):
        return {key: _replace_texts(item, texts) for key, item in value.items()}
    return value


def forget_in_run(proposals: Any, rejected: Any, deleted: dict[int, str]) -> tuple[Any, Any]:
    """A run's proposals and rejections without the text of the ``deleted`` notes (id → text).

    A proposed group that names a deleted note loses its text and categories (the model wrote
    them from that note); a rejection that names one loses its reason (which may quote it); a
    stored raw answer that the deleted note was sent with, or that quotes it, is dropped; any
    other verbatim copy of the text is replaced. Each is replaced by :func:`deleted_marker`.
    """
    if not deleted:
        return proposals, rejected
    texts = [(text, deleted_marker(note_id)) for note_id, text in deleted.items()]
    proposals = _replace_texts(proposals, texts)
    rejected = _replace_texts(rejected, texts)
    if isinstance(proposals, dict):
        proposals = dict(proposals)
        groups = proposals.get("groups")
        if isinstance(groups, list):
            proposals["groups"] = [_forget_group(group, deleted) for group in groups]
        raw = proposals.get("raw")
        if isinstance(raw, str) and raw:
            sent = _ids_of(proposals.get("notes"))
            named = any(f"memory:{note_id}" in raw for note_id in deleted)
            if sent & deleted.keys() or named:
                proposals["raw"] = " ".join(deleted_marker(n) for n in sorted(deleted))
    if isinstance(rejected, list):
        rejected = [_forget_rejection(item, deleted) for item in rejected]
    return proposals, rejected


def _markers(ids: set[int]) -> str:
    return " ".join(deleted_marker(note_id) for note_id in sorted(ids))


def _forget_group(group: Any, deleted: dict[int, str]) -> Any:
    if not isinstance(group, dict):
        return group
    gone = _ids_of(group.get("ids")) & deleted.keys()
    if not gone:
        return group
    return {**group, "categories": [], "content": _markers(gone)}


def _forget_rejection(item: Any, deleted: dict[int, str]) -> Any:
    if not isinstance(item, dict):
        return item
    gone = _ids_of(item.get("ids")) & deleted.keys()
    if not gone or "reason" not in item:
        return item
    return {**item, "reason": _markers(gone)}


def kept_apart_groups(runs: list[OptimizationRun]) -> list[tuple[int, ...]]:
    """The sets of note ids the person reverted (kept apart), from their runs."""
    groups = []
    for run in runs:
        for item in run.reverted:
            ids = tuple(sorted(_ids_of(item.get("source_ids"))))
            if len(ids) > 1:
                groups.append(ids)
    return groups


def forget_deleted_meanwhile(
    outcome: RunOutcome, live_ids: set[int], applied: Any
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The outcome's proposals and rejections without what the model wrote about notes the
    person deleted while it was thinking (their text is gone; only the ids are known)."""
    merged_away = {
        note_id
        for item in applied or []
        if isinstance(item, dict)
        for note_id in _ids_of(item.get("source_ids"))
    }
    named: set[int] = _ids_of(outcome.proposals.get("notes"))
    for group in [*(outcome.proposals.get("groups") or []), *outcome.rejected]:
        if isinstance(group, dict):
            named |= _ids_of(group.get("ids"))
    gone = named - live_ids - merged_away
    proposals, rejected = forget_in_run(
        outcome.proposals, list(outcome.rejected), dict.fromkeys(gone, "")
    )
    return proposals, rejected


def no_merge_message(run_id: Any, group: int | None = None) -> str:
    """Why there is nothing to revert (``NoteNotFound``'s message)."""
    if group is None:
        return (
            f"There is no merge {run_id} to revert: it was reverted, expired or never existed. "
            "Reload the list of merges."
        )
    return (
        f"There is no group {group} of merge {run_id} to revert: it was reverted, expired or "
        "never existed. Reload the list of merges."
    )


def reverted_group(index: int, merged_id: int, sources: Any) -> dict[str, Any]:
    """How a reverted group is remembered on its run (no text: ids only)."""
    if isinstance(sources, dict):
        ids = [int(item["id"]) for item in sources.get("notes", [])]
    else:
        ids = [note.id for note in sources]
    return {"index": index, "merged_id": merged_id, "source_ids": ids}


def forget_snapshot_json(data: dict[str, Any]) -> dict[str, Any]:
    """A snapshot's sources with only their ids and versions left (text and categories gone):
    kept while it lasts so that reverting its merge still answers "conflict", not "not found"."""
    notes = [
        {**item, "categories": [], "content": deleted_marker(int(item["id"]))}
        for item in data.get("notes", [])
    ]
    return {**data, "notes": notes, "forgotten": True}
