"""The merges side of :class:`~agent_memory.stores.orm.DjangoStore`: the storage steps of
:class:`~agent_memory.stores.merges.MergeMethods` on the ``MergeRun`` and
``MergedNoteSnapshot`` tables, and each person's ``OptimizerState``."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import fields
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

from django.db import IntegrityError, transaction
from django.db.models import Q

from ..kinds import MergeRunStatus, NoteSource
from ..locking import Tally
from ..models import (
    WANTS_RUN,
    MemoryNote,
    MemoryUserLock,
    MergedNoteSnapshot,
    MergeRun,
    OptimizerState,
)
from ..notes import NewNote, Note
from .merges import MergeMethods
from .orm_rows import to_note
from .values import MergedNote, OptimizationRun, OptimizerStateRecord

R = TypeVar("R")


def _record(kind: type[R], row: Any, **values: Any) -> R:
    """A ``kind`` (a record of :mod:`.base`) with ``row``'s fields of the same names, and
    ``values`` for the others."""
    names = [item.name for item in fields(kind) if item.name not in values]  # type: ignore[arg-type]
    return kind(**{name: getattr(row, name) for name in names}, **values)


def _changes(before: Any, after: Any) -> dict[str, Any]:
    """The fields of record ``after`` that differ from ``before`` (the same kind)."""
    return {
        item.name: getattr(after, item.name)
        for item in fields(after)
        if getattr(before, item.name) != getattr(after, item.name)
    }


def _run_record(row: MergeRun) -> OptimizationRun:
    return _record(OptimizationRun, row, status=MergeRunStatus(row.status))


def _merged_record(row: MergedNoteSnapshot) -> MergedNote:
    return _record(
        MergedNote,
        row,
        sources=_snapshot_notes(row.user_id, row.sources),
        forgotten=bool(row.sources.get("forgotten")),
    )


#: Version of the JSON a snapshot keeps its sources in.
SNAPSHOT_SCHEMA = 1


def _note_json(note: Note) -> dict[str, Any]:
    return {
        "id": note.id,
        "version": note.version,
        "categories": list(note.categories),
        "content": note.content,
        "source": note.source,
        "origin": note.origin,
        "created_by": note.created_by,
        "valid_until": None if note.valid_until is None else note.valid_until.isoformat(),
        "created_at": note.created_at.isoformat(),
        "updated_at": note.updated_at.isoformat(),
    }


def _snapshot_json(item: MergedNote) -> dict[str, Any]:
    """The sources of one group as a snapshot keeps them (marked once they are forgotten)."""
    data = {"schema": SNAPSHOT_SCHEMA, "notes": [_note_json(note) for note in item.sources]}
    return {**data, "forgotten": True} if item.forgotten else data


def _snapshot_notes(user_id: Any, data: dict[str, Any]) -> tuple[Note, ...]:
    return tuple(
        Note(
            id=int(item["id"]),
            user_id=user_id,
            categories=tuple(item["categories"]),
            content=item["content"],
            version=int(item["version"]),
            source=item.get("source", NoteSource.AGENT),
            created_at=datetime.fromisoformat(item["created_at"]),
            updated_at=datetime.fromisoformat(item["updated_at"]),
            origin=item.get("origin", ""),
            created_by=item.get("created_by", item.get("source", NoteSource.AGENT)),
            valid_until=(
                datetime.fromisoformat(item["valid_until"]) if item.get("valid_until") else None
            ),
        )
        for item in data.get("notes", [])
    )


class DjangoMerges(MergeMethods):
    """Runs, snapshots and the optimizer state in the app's tables, written in the transaction
    of the person's lock (:func:`~agent_memory.locking.user_write_lock`) that the merge methods
    hold. Composed with :class:`~agent_memory.stores.orm_notes.DjangoNotes`, whose notes the
    merges replace and restore."""

    if TYPE_CHECKING:  # the notes side it is composed with

        @property
        def using(self) -> str: ...

        def _rows(self, user_id: Any) -> Any: ...

        def _count(self, user_id: Any, notes: int, chars: int) -> Tally: ...

        @staticmethod
        def _new_row(user_id: Any, note: NewNote, now: datetime) -> MemoryNote: ...

    can_merge = True

    # --- merges: the storage steps of MergeMethods -----------------------------------------

    def _atomic(self) -> AbstractContextManager[object]:
        return transaction.atomic(using=self.using)

    def _run_rows(self, user_id: Any) -> Any:
        return MergeRun.objects.using(self.using).filter(user_id=user_id)

    def _snapshot_rows(self, user_id: Any) -> Any:
        return MergedNoteSnapshot.objects.using(self.using).filter(user_id=user_id)

    def _runs_of(self, user_id: Any, *, running: bool = False) -> list[OptimizationRun]:
        rows = self._run_rows(user_id)
        if running:
            rows = rows.filter(status=MergeRunStatus.RUNNING)
        return [_run_record(row) for row in rows.order_by("pk")]

    def _run_of(self, user_id: Any, run_id: int) -> OptimizationRun | None:
        row = self._run_rows(user_id).filter(pk=run_id).first()
        return None if row is None else _run_record(row)

    def _add_run(
        self, user_id: Any, *, model: str, now: datetime, lease_until: datetime
    ) -> OptimizationRun:
        row = MergeRun.objects.using(self.using).create(
            user_id=user_id,
            status=MergeRunStatus.RUNNING,
            model=model,
            started_at=now,
            lease_expires_at=lease_until,
        )
        return _run_record(row)

    def _put_run(self, before: OptimizationRun, after: OptimizationRun) -> None:
        changed = _changes(before, after)
        if changed:
            MergeRun.objects.using(self.using).filter(pk=after.id).update(**changed)

    def _runs_with_text(
        self, user_id: Any, finished_before: datetime | None = None
    ) -> list[OptimizationRun]:
        rows = MergeRun.objects.using(self.using).exclude(proposals=self.policy.erased_proposals)
        if finished_before is None:
            rows = rows.filter(user_id=user_id)
        else:
            rows = rows.filter(finished_at__lt=finished_before)
        return [_run_record(row) for row in rows.order_by("pk")]

    def _put_state(
        self, user_id: Any, before: OptimizerStateRecord, after: OptimizerStateRecord
    ) -> None:
        self._upsert_state(user_id, _changes(before, after))

    def _live_note_ids(self, user_id: Any) -> set[int]:
        return set(self._rows(user_id).values_list("pk", flat=True))

    def _merge_notes(
        self, user_id: Any, sources: Sequence[Note], note: NewNote, now: datetime
    ) -> Note:
        self._count(
            user_id,
            1 - len(sources),
            len(note.content) - sum(len(source.content) for source in sources),
        )
        self._rows(user_id).filter(pk__in=[source.id for source in sources]).delete()
        row = self._new_row(user_id, note, now)
        row.save(using=self.using, force_insert=True)
        return to_note(row)

    def _unmerge_notes(
        self, user_id: Any, merged: Sequence[Note], originals: Sequence[Note], now: datetime
    ) -> list[Note]:
        self._count(
            user_id,
            len(originals) - len(merged),
            sum(len(note.content) for note in originals)
            - sum(len(note.content) for note in merged),
        )
        self._rows(user_id).filter(pk__in=[note.id for note in merged]).delete()
        restored = []
        for note in originals:
            row = self._new_row(
                user_id, NewNote(note.categories, note.content, NoteSource(note.source)), now
            )
            row.pk, row.version, row.created_at = note.id, note.version + 1, note.created_at
            row.origin, row.created_by = note.origin, note.created_by
            row.valid_until = note.valid_until
            row.save(using=self.using, force_insert=True)
            restored.append(to_note(row))
        return restored

    def _snapshots_of(
        self, user_id: Any, run_id: int | None = None, merged_ids: Sequence[int] | None = None
    ) -> list[MergedNote]:
        rows = self._snapshot_rows(user_id)
        if run_id is not None:
            rows = rows.filter(run_id=run_id)
        if merged_ids is not None:
            rows = rows.filter(merged_note_id__in=list(merged_ids))
        return [_merged_record(row) for row in rows.order_by("run_id", "group_index")]

    def _add_snapshot(self, user_id: Any, item: MergedNote) -> None:
        MergedNoteSnapshot.objects.using(self.using).create(
            run_id=item.run_id,
            user_id=user_id,
            group_index=item.group_index,
            merged_note_id=item.merged_note_id,
            merged_version=item.merged_version,
            sources=_snapshot_json(item),
            created_at=item.created_at,
        )

    def _put_snapshot(self, user_id: Any, item: MergedNote) -> None:
        rows = self._snapshot_rows(user_id)
        rows.filter(run_id=item.run_id, group_index=item.group_index).update(
            sources=_snapshot_json(item)
        )

    def _drop_snapshots(self, user_id: Any, items: Sequence[MergedNote] | None = None) -> None:
        rows = self._snapshot_rows(user_id)
        if items is not None:
            groups = Q(pk__in=[])
            for item in items:
                groups |= Q(run_id=item.run_id, group_index=item.group_index)
            rows = rows.filter(groups)
        rows.delete()

    def _purge_snapshots(self, before: datetime) -> int:
        snapshots = MergedNoteSnapshot.objects.using(self.using)
        deleted, _ = snapshots.filter(created_at__lt=before).delete()
        return int(deleted)

    def list_optimization_runs(self, user_id: Any, limit: int = 50) -> list[OptimizationRun]:
        """The person's runs, newest first."""
        rows = self._run_rows(user_id).order_by("-started_at", "-id")[:limit]
        return [_run_record(row) for row in rows]

    # --- per-person optimizer state --------------------------------------------------------

    def _upsert_state(self, user_id: Any, values: dict[str, Any]) -> None:
        """Set ``values`` on the person's state row, creating it if needed."""
        if not values:
            return
        states = OptimizerState.objects.using(self.using)
        if not states.filter(user_id=user_id).update(**values):
            try:
                with transaction.atomic(using=self.using):
                    states.create(user_id=user_id, **values)
            except IntegrityError:
                states.filter(user_id=user_id).update(**values)

    def record_optimizer_activity(
        self, user_id: Any, *, at: datetime, model: str
    ) -> OptimizerStateRecord:
        """Note that the person just had a turn answered by ``model``."""
        values = {"last_activity_at": at, "model": model}
        self._upsert_state(user_id, values)
        return self.get_optimizer_state(user_id)

    def get_optimizer_state(self, user_id: Any) -> OptimizerStateRecord:
        row = OptimizerState.objects.using(self.using).filter(user_id=user_id).first()
        if row is None:
            return OptimizerStateRecord()
        return _record(OptimizerStateRecord, row)

    def due_optimizer_users(self, now: datetime) -> list[tuple[Any, str]]:
        """``(user_id, model alias)`` of people active since their last success whose next run
        is due (and whose memory is on), soonest first: one query on the partial index
        ``agent_memory_state_wanted``, reading two columns (no model instance per row)."""
        rows = (
            OptimizerState.objects.using(self.using)
            .filter(WANTS_RUN)
            .filter(Q(next_run_at__isnull=True) | Q(next_run_at__lte=now))
            # A person who turned memory off is left alone until they turn it on again.
            .exclude(
                user_id__in=MemoryUserLock.objects.using(self.using)
                .filter(memory_enabled=False)
                .values("user_id")
            )
            .order_by("next_run_at", "user_id")
            .values_list("user_id", "model")
        )
        return [(user_id, model or "default") for user_id, model in rows]

    def get_notes_fingerprint(self, user_id: Any) -> str:
        """The fingerprint of the person's notes at their last successful optimizer run."""
        row = OptimizerState.objects.using(self.using).filter(user_id=user_id).first()
        return row.notes_fingerprint if row is not None else ""

    def set_notes_fingerprint(self, user_id: Any, fingerprint: str) -> None:
        self._upsert_state(user_id, {"notes_fingerprint": fingerprint})
