"""The optimizer: for one person, claim a run, ask the model, check, apply, finish; and revert.

:class:`Optimizer` works over one store; ``LongTermMemory`` holds one and delegates
``after_turn / optimize / optimizer_state / merges / revert_merge`` to it (the listing and
reverting of past merges are :mod:`.reverts`, the queueing of runs :mod:`.queue`). The run's
lease and the backoff live in the store (the database for ``DjangoStore``), so any number of
processes may try at once: the claim lets one through and the others are skipped.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.utils import timezone

from .. import embeddings, rules, signals
from ..conf import Limits, memory_settings
from ..errors import AgentMemoryError, LeaseExpired, NoteNotFound, StaleVersion
from ..kinds import MergeRunStatus
from ..notes import NewNote, Note
from ..overview import RevertableMerge
from ..people import user_id_of
from ..stores.base import MergePlan, RunOutcome
from ..stores.policy import SCHEMA_VERSION
from . import reasons, reverts
from .backends import UnknownModel, get_backend
from .candidates import candidate_groups, fingerprint, pack_calls
from .checker import Verdict, check_groups
from .proposer import ProposalParseError, build_messages, parse_proposals
from .queue import can_enqueue, enqueue_run
from .reasons import reason

logger = logging.getLogger("agent_memory.optimizer")

#: How much of an unparsable answer is kept on the run for ops (erased with the person's memory).
RAW_ANSWER_CHARS = 4000


def now() -> datetime:
    """The current time (a seam for tests that move the clock)."""
    return timezone.now()


@dataclass(frozen=True)
class OptimizationResult:
    """What one ``optimize`` call did. ``status``: ``succeeded``, ``failed`` or ``skipped``;
    ``applied`` / ``rejected``: how many proposed groups; ``reason``: why it failed or was
    skipped."""

    run_id: int | None
    status: str
    applied: int = 0
    rejected: int = 0
    reason: str = ""


class Optimizer:
    """The optimizer of one store: runs for one person at a time, their state, their merges.

    ``options``: the options given in code (over ``AGENT_MEMORY["OPTIMIZER"]``; ``{}`` for none),
    or ``None`` when the optimizer is off; merges can still be listed and reverted then.
    Options given in code apply to this object's own runs only: nothing is stored per person,
    and the django-q2 tasks and ``memory_optimize`` run with ``AGENT_MEMORY["OPTIMIZER"]``.
    Every method takes the person as a user instance or its primary key.
    """

    def __init__(self, store: Any, options: Mapping[str, Any] | None) -> None:
        self.store = store
        self.given = None if options is None else dict(options)

    @property
    def options(self) -> dict[str, Any] | None:
        """The options in force now (settings, then ``given``), or ``None`` when off."""
        if self.given is None:
            return None
        configured = memory_settings.OPTIMIZER
        if configured is False:
            return None
        return {**configured, **self.given}

    @property
    def can_merge(self) -> bool:
        """Whether the store can merge (``store.can_merge``)."""
        return bool(self.store.can_merge)

    # --- after a turn ------------------------------------------------------------------------

    def after_turn(self, user: Any, model: str = "default") -> None:
        """Record the person's activity and, if a run is due, enqueue a run.

        With a store a worker reaches (``runs_in_workers``, as ``DjangoStore``) and django-q2
        installed the run is a django-q2 task (:func:`~.queue.enqueue_run`), which runs with
        ``AGENT_MEMORY["OPTIMIZER"]``; with any other store it runs here, with this object's
        options (an in-process store cannot be reached from a worker). Failing to enqueue never
        breaks the turn: it is logged, and the sweep picks the person up later.
        """
        if self.options is None:
            return
        user_id = user_id_of(user)
        store = self.store
        at = now()
        state = store.record_optimizer_activity(user_id, at=at, model=model)
        if state.next_run_at is not None and state.next_run_at > at:
            return
        try:
            if store.runs_in_workers and can_enqueue():
                enqueue_run([(user_id, model)], getattr(store, "using", None))
                return
            self.optimize(user_id, model=model)
        except Exception:
            logger.exception("Could not start the memory optimizer for person %s.", user_id)

    # --- one run -----------------------------------------------------------------------------

    def optimize(
        self, user: Any, *, model: str = "default", force: bool = False
    ) -> OptimizationResult:
        """Run the optimizer for the person now if due (always with ``force``)."""
        options = self.options
        if options is None:
            return OptimizationResult(None, "skipped", reason="The optimizer is off.")
        user_id = user_id_of(user)
        started = now()
        lease = timedelta(minutes=float(options["lease_minutes"]))
        run = self.store.claim_optimization_run(
            user_id, model=model, now=started, lease_until=started + lease, force=force
        )
        if run is None:
            return OptimizationResult(
                None, "skipped", reason="Not due yet, or another run holds the lease."
            )
        interval = timedelta(hours=float(options["interval_hours"]))
        budget = int(options.get("max_call_chars", 12_000))
        try:
            return self._run(user_id, run.id, model, interval, budget)
        except Exception as error:
            # Whatever broke (a check tripped by an odd answer, a bug, the database), it is one
            # failed run of this person with the usual backoff, never an exception that stops the
            # sweep or the command before the next person; and it does not hold the lease.
            logger.exception("The memory optimizer's run %s for person %s failed.", run.id, user_id)
            failed = _describe(error)
            try:
                self._finish(user_id, run.id, interval, RunOutcome(False, error=failed))
            except Exception:
                logger.exception("Could not close run %s; its lease will expire.", run.id)
            return OptimizationResult(run.id, MergeRunStatus.FAILED, reason=failed)

    def _finish(self, user_id: Any, run_id: int, interval: timedelta, outcome: RunOutcome) -> bool:
        return bool(
            self.store.finish_optimization_run(
                user_id, run_id, outcome, now=now(), interval=interval
            )
        )

    def _closed(
        self,
        user_id: Any,
        run_id: int,
        interval: timedelta,
        outcome: RunOutcome,
        applied: int = 0,
        rejected: int = 0,
    ) -> OptimizationResult:
        if not self._finish(user_id, run_id, interval, outcome):
            return OptimizationResult(
                run_id,
                MergeRunStatus.FAILED,
                applied,
                rejected,
                reason=reasons.LEASE_EXPIRED,
            )
        status = MergeRunStatus.SUCCEEDED if outcome.succeeded else MergeRunStatus.FAILED
        return OptimizationResult(run_id, status, applied, rejected, reason=outcome.error)

    def _run(
        self, user_id: Any, run_id: int, model: str, interval: timedelta, budget: int
    ) -> OptimizationResult:
        store = self.store
        notes, vectors, _ = embeddings.notes_and_similarities(store, user_id, None)
        proposals: dict[str, Any] = {"schema": SCHEMA_VERSION, "model": model, "groups": []}
        seen = fingerprint(notes)
        if store.get_notes_fingerprint(user_id) == seen:
            # Nothing changed since the last success: the model would see the same notes again.
            proposals["unchanged"] = True
            return self._succeeded_quietly(user_id, run_id, interval, proposals, seen)
        # The person's pinned notes are theirs alone: never sent to the model, never merged.
        mergeable = [note for note in notes if not note.pinned]
        calls = pack_calls(candidate_groups(mergeable, vectors), budget)
        proposals["calls"] = [[note.id for note in call] for call in calls]
        if not calls:
            return self._succeeded_quietly(user_id, run_id, interval, proposals, seen)
        try:
            backend = get_backend(model)
        except UnknownModel as error:
            return self._closed(user_id, run_id, interval, RunOutcome(False, error=str(error)))
        kept_apart = _kept_apart(store, user_id, notes)
        proposals["notes"] = sorted(note.id for call in calls for note in call)
        groups: list[Any] = []
        for call in calls:
            sent = {note.id for note in call}
            told_apart = [ids for ids in kept_apart if len(sent.intersection(ids)) > 1]
            try:
                answer = backend.complete(build_messages(call, told_apart))
            except Exception as error:
                failed = reason(reasons.MODEL_CALL_FAILED, error=_describe(error))
                return self._closed(user_id, run_id, interval, RunOutcome(False, error=failed))
            try:
                groups.extend(parse_proposals(answer))
            except Exception as error:
                # ProposalParseError, or anything the decoder raises on an answer of any shape.
                unreadable = (
                    str(error) if isinstance(error, ProposalParseError) else _describe(error)
                )
                raw = answer[:RAW_ANSWER_CHARS] if isinstance(answer, str) else ""
                outcome = RunOutcome(False, proposals={**proposals, "raw": raw}, error=unreadable)
                return self._closed(user_id, run_id, interval, outcome)
        proposals["groups"] = groups
        versions = {note.id: note.version for note in notes}
        limits = memory_settings.limits
        rejected: list[dict[str, Any]] = []
        applied = skipped = 0
        for verdict in check_groups(groups, notes):
            if verdict.note is None:
                rejected.append(verdict.as_rejection())
                continue
            apart = next((ids for ids in kept_apart if len(set(ids) & set(verdict.ids)) > 1), None)
            if apart is not None:
                both = sorted(set(apart) & set(verdict.ids))
                keys = ", ".join(f"memory:{note_id}" for note_id in both)
                rejected.append(
                    _rejection(verdict, "kept_apart", reason(reasons.KEPT_APART, keys=keys))
                )
                continue
            plan = MergePlan(
                group_index=verdict.index,
                sources={note_id: versions[note_id] for note_id in verdict.ids},
                note=verdict.note,
            )
            try:
                merged = store.apply_merge(
                    user_id, run_id, plan, now=now(), check=_apply_check(verdict.note, limits)
                )
            except LeaseExpired:
                break
            except (StaleVersion, NoteNotFound):
                skipped += 1
                rejected.append(_rejection(verdict, "changed", reasons.CHANGED))
            except AgentMemoryError as error:
                rejected.append(_rejection(verdict, error.kind, error.message))
            else:
                applied += 1
                signals.deleted(self, user_id, plan.sources, signals.DeleteReason.MERGED)
                signals.saved(self, user_id, [merged])
                signals.send_after_commit(
                    signals.merge_applied, self, user_id=user_id, run_id=run_id
                )
        refused = len(rejected) - skipped
        succeeded = not groups or refused < len(groups)
        outcome = RunOutcome(
            succeeded,
            proposals=proposals,
            rejected=rejected,
            error="" if succeeded else reasons.ALL_REJECTED,
        )
        result = self._closed(user_id, run_id, interval, outcome, applied, len(rejected))
        if result.status == MergeRunStatus.SUCCEEDED:
            # The notes as this run leaves them: a next run with nothing new has nothing to send.
            store.set_notes_fingerprint(
                user_id, fingerprint(store.list_notes(user_id)) if applied or skipped else seen
            )
        return result

    def _succeeded_quietly(
        self,
        user_id: Any,
        run_id: int,
        interval: timedelta,
        proposals: dict[str, Any],
        seen: str,
    ) -> OptimizationResult:
        """Close the run as a success without asking the model (nothing worth sending)."""
        result = self._closed(user_id, run_id, interval, RunOutcome(True, proposals=proposals))
        if result.status == MergeRunStatus.SUCCEEDED:
            self.store.set_notes_fingerprint(user_id, seen)
        return result

    # --- state, merges, revert ---------------------------------------------------------------

    def state(self, user: Any) -> dict[str, Any]:
        """``{"consecutive_failures", "next_run_at", "last_success_at"}`` of the person."""
        state = self.store.get_optimizer_state(user_id_of(user))
        return {
            "consecutive_failures": state.consecutive_failures,
            "next_run_at": state.next_run_at,
            "last_success_at": state.last_success_at,
        }

    def merges(self, user: Any) -> list[RevertableMerge]:
        """The person's merge runs that can still be reverted, newest first, each with its
        groups: the merged note and the notes it was made from."""
        return reverts.revertable_merges(self.store, user_id_of(user), _retention_cutoff())

    def has_merge(self, user: Any, run_id: int) -> bool:
        """Whether the person has the revertable merge run ``run_id`` (another person's run,
        a reverted or expired one: ``False``)."""
        cutoff = _retention_cutoff()
        return reverts.is_revertable(self.store, user_id_of(user), run_id, None, cutoff)

    def revert_merge(self, user: Any, run_id: Any, group: Any = None) -> list[Note]:
        """Revert one merge run, or only its group number ``group``: remove the merged notes
        and restore the originals with their ids (version + 1), checking limits and duplicates
        like a create. The reverted groups are remembered: the optimizer never merges them
        again. Returns the restored notes.

        Raises ``InvalidNote`` (``group`` is not a group number), ``NoteNotFound`` (no such
        revertable run or group of this person), ``MergeConflict`` (a merged note changed or
        was deleted since), ``LimitReached`` or ``DuplicateNote``.
        """
        user_id = user_id_of(user)
        cutoff = _retention_cutoff()
        return reverts.revert(self.store, self, user_id, run_id, group, at=now(), cutoff=cutoff)


def _describe(error: BaseException) -> str:
    message = str(error)[:300]
    return f"{type(error).__name__}: {message}" if message else type(error).__name__


def _kept_apart(store: Any, user_id: Any, notes: list[Note]) -> list[tuple[int, ...]]:
    """The groups of current notes the person kept apart by reverting their merge."""
    current = {note.id for note in notes}
    groups = []
    for ids in store.kept_apart(user_id):
        alive = tuple(note_id for note_id in ids if note_id in current)
        if len(alive) > 1 and alive not in groups:
            groups.append(alive)
    return groups


def _rejection(verdict: Verdict, code: str, reason: str) -> dict[str, Any]:
    return {"index": verdict.index, "ids": list(verdict.ids), "code": code, "reason": reason}


def _apply_check(note: NewNote, limits: Limits) -> Callable[[list[Note], list[Note]], None]:
    def check(others: list[Note], sources: list[Note]) -> None:
        # Under the person's lock, against the notes as they are now.
        rules.check_create(others, [note], limits)

    return check


#: The retention purge runs at most this often (per cache: site-wide with a shared cache).
PURGE_EVERY = timedelta(hours=1)


def purge_expired(store: Any, *, force: bool = False) -> int:
    """Delete the snapshots older than ``MERGE_RETENTION_DAYS`` (and the proposals of runs that
    old); return how many snapshots went. The sweep and ``memory_optimize`` both call it.

    It runs at most once per :data:`PURGE_EVERY` (unless ``force``): the time of the last purge
    is kept in Django's default cache, so with a cache the processes share (Redis, database)
    it is once an hour for the site, with the per-process local-memory cache once an hour per
    process. Its queries use indexes either way (``agent_memory_snapshot_age``,
    ``agent_memory_run_unerased``)."""
    from django.core.cache import cache

    key = f"agent_memory:purged:{getattr(store, 'using', None) or id(store)}"
    at = now()
    last = cache.get(key)
    if not force and isinstance(last, datetime) and timedelta(0) <= at - last < PURGE_EVERY:
        return 0
    cache.set(key, at, timeout=int(PURGE_EVERY.total_seconds()) * 2)
    return int(store.purge_merge_snapshots(_retention_cutoff()))


def purge_expired_notes(store: Any) -> int:
    """Delete everyone's notes whose ``valid_until`` has passed, like any delete (their text
    leaves every copy; ``note_deleted`` with reason ``expired``); return how many went. The
    sweep and ``memory_optimize`` both call it, so nothing waits for a read."""
    purged = store.purge_expired(now())
    for user_id, ids in purged.items():
        signals.deleted(store, user_id, ids, signals.DeleteReason.EXPIRED)
    return sum(len(ids) for ids in purged.values())


def _retention_cutoff() -> datetime:
    return now() - timedelta(days=float(memory_settings.MERGE_RETENTION_DAYS))
