"""The merge policy: what a run, an applied or reverted group, a deletion and an erase do to the
records a store keeps, and when a person is due. Pure functions over the values of
:mod:`agent_memory.stores.base`; every store calls :class:`MergePolicy` inside its transactions.

No Django here beyond translation markers: a custom store's tests can use it as it is.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from django.utils.translation import gettext_noop

from ..kinds import MergeRunStatus
from ..notes import Note
from ..rules import parse_note_id
from .values import (
    MergedNote,
    MergePlan,
    OptimizationRun,
    OptimizerStateRecord,
    RunOutcome,
)

#: The failure of a run whose lease ran out (one of the optimizer's reasons, stored in English).
LEASE_EXPIRED = gettext_noop(
    "The run's lease expired before it finished; its late result was discarded."
)

#: Version of the JSON stored with runs (their proposals).
SCHEMA_VERSION = 1

#: Waits after the 1st, 2nd, 3rd and later failures in a row.
BACKOFF = (timedelta(hours=1), timedelta(hours=6), timedelta(hours=24))

#: What the proposals of a run erased with the person's memory (or past retention) are.
ERASED_PROPOSALS: dict[str, Any] = {"schema": SCHEMA_VERSION, "erased": True}

#: Verbatim copies of a deleted note's text this long or longer are replaced wherever they are.
VERBATIM_MIN_CHARS = 8


def backoff_delay(consecutive_failures: int) -> timedelta:
    """How long to wait after ``consecutive_failures`` failed runs in a row (1 or more)."""
    index = min(max(consecutive_failures, 1), len(BACKOFF)) - 1
    return BACKOFF[index]


@dataclass(frozen=True)
class MergePolicy:
    """The rules every store follows for runs and the optimizer state (see
    :class:`agent_memory.stores.base.MergePolicy`). ``interval``: the wait after a success when
    the runner gives none."""

    interval: timedelta = timedelta(hours=24)

    @property
    def erased_proposals(self) -> dict[str, Any]:
        return dict(ERASED_PROPOSALS)

    def is_due(self, state: OptimizerStateRecord, now: datetime) -> bool:
        return state.next_run_at is None or state.next_run_at <= now

    def wants_run(self, state: OptimizerStateRecord, now: datetime) -> bool:
        active = state.last_activity_at is not None and (
            state.last_success_at is None or state.last_activity_at > state.last_success_at
        )
        return active and self.is_due(state, now)

    def after_outcome(
        self,
        state: OptimizerStateRecord,
        *,
        now: datetime,
        succeeded: bool,
        interval: timedelta | None = None,
    ) -> OptimizerStateRecord:
        if succeeded:
            return replace(
                state,
                consecutive_failures=0,
                last_success_at=now,
                next_run_at=now + (interval or self.interval),
            )
        failures = state.consecutive_failures + 1
        return replace(
            state, consecutive_failures=failures, next_run_at=now + backoff_delay(failures)
        )

    def holds_lease(self, run: OptimizationRun, now: datetime) -> bool:
        return run.status == MergeRunStatus.RUNNING and run.lease_expires_at > now

    def lease_expired(self, run: OptimizationRun, now: datetime) -> OptimizationRun:
        return replace(run, status=MergeRunStatus.FAILED, finished_at=now, error=LEASE_EXPIRED)

    def finished(
        self, run: OptimizationRun, outcome: RunOutcome, *, now: datetime, live_ids: set[int]
    ) -> OptimizationRun:
        if run.proposals == ERASED_PROPOSALS:
            # The person erased their memory while the model was thinking: keep no text.
            proposals, rejected = run.proposals, erased_rejections(outcome.rejected)
        else:
            proposals, rejected = forget_deleted_meanwhile(outcome, live_ids, run.applied)
        return replace(
            run,
            status=MergeRunStatus.SUCCEEDED if outcome.succeeded else MergeRunStatus.FAILED,
            finished_at=now,
            proposals=proposals,
            rejected=rejected,
            error=outcome.error,
        )

    def applied(
        self, run: OptimizationRun, plan: MergePlan, merged_id: int, sources: Sequence[Note]
    ) -> OptimizationRun:
        entry = group_entry(plan.group_index, merged_id, [note.id for note in sources])
        return replace(run, applied=[*run.applied, entry])

    def reverted(
        self, run: OptimizationRun, groups: Sequence[MergedNote], now: datetime
    ) -> OptimizationRun:
        entries = [
            group_entry(item.group_index, item.merged_note_id, [note.id for note in item.sources])
            for item in groups
        ]
        return replace(run, reverted=[*run.reverted, *entries], reverted_at=now)

    def erased(self, run: OptimizationRun) -> OptimizationRun:
        return replace(
            run, proposals=dict(ERASED_PROPOSALS), rejected=erased_rejections(run.rejected)
        )

    def forget(self, run: OptimizationRun, deleted: Mapping[int, str]) -> OptimizationRun:
        if run.proposals == ERASED_PROPOSALS:
            return run  # nothing left to forget
        proposals, rejected = forget_in_run(run.proposals, run.rejected, dict(deleted))
        if proposals == run.proposals and rejected == run.rejected:
            return run
        return replace(run, proposals=proposals, rejected=rejected)

    def forget_sources(self, merged: MergedNote) -> MergedNote:
        sources = tuple(
            replace(note, categories=(), content=deleted_marker(note.id)) for note in merged.sources
        )
        return replace(merged, sources=sources, forgotten=True)

    def kept_apart(self, runs: Sequence[OptimizationRun]) -> list[tuple[int, ...]]:
        groups = []
        for run in runs:
            for item in run.reverted:
                ids = tuple(sorted(_ids_of(item.get("source_ids"))))
                if len(ids) > 1:
                    groups.append(ids)
        return groups


def group_entry(index: int, merged_id: int, source_ids: list[int]) -> dict[str, Any]:
    """How an applied or reverted group is remembered on its run (no text: ids only)."""
    return {"index": index, "merged_id": merged_id, "source_ids": source_ids}


def erased_rejections(rejected: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rejections without their human reasons (which may quote note text), for erase-all."""
    return [
        {key: value for key, value in item.items() if key not in ("reason",)} for item in rejected
    ]


# --- deletion reaches every copy ---------------------------------------------------------------


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
