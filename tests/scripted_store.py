"""Stores for tests that serve the site's memory (``AGENT_MEMORY["STORE"]``) from a store that
cannot merge, or from one whose merges and revert answer are set by the test."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from django.utils import timezone

from agent_memory.notes import NewNote
from agent_memory.stores.base import MergedNote, OptimizationRun
from agent_memory.stores.base import StoreBase as BaseStore
from agent_memory.stores.orm import DjangoStore


class NoteOnlyStore(BaseStore):
    """The five note methods of ``inner`` (by default a DjangoStore) over the defaults of
    ``BaseStore``: a store that cannot merge."""

    def __init__(self, inner: Any = None) -> None:
        super().__init__()
        self._store = inner if inner is not None else DjangoStore()

    def list_notes(self, user_id):
        return self._store.list_notes(user_id)

    def insert_notes(self, user_id, notes):
        return self._store.insert_notes(user_id, notes)

    def update_note(self, user_id, note_id, version, note):
        return self._store.update_note(user_id, note_id, version, note)

    def delete_note(self, user_id, note_id, version):
        return self._store.delete_note(user_id, note_id, version)

    def clear_notes(self, user_id):
        return self._store.clear_notes(user_id)


class ScriptedMergeStore(NoteOnlyStore):
    """A store that can merge, with the merge runs and the revert's error set by the test."""

    def __init__(self, runs=(), merged=(), error: Exception | None = None) -> None:
        super().__init__()
        self.runs, self.merged, self.error, self.calls = list(runs), list(merged), error, []

    def claim_optimization_run(self, user_id, **kwargs):
        return None

    def finish_optimization_run(self, user_id, run_id, outcome, **kwargs):
        return False

    def apply_merge(self, user_id, run_id, plan, **kwargs):
        raise NotImplementedError

    def list_optimization_runs(self, user_id, limit=50):
        return self.runs

    def list_merged_notes(self, user_id):
        self.calls.append(("merges", user_id))
        return self.merged

    def revert_merge(self, user_id, run_id, *, now, group=None):
        self.calls.append(
            ("revert", user_id, run_id) if group is None else ("revert", user_id, run_id, group)
        )
        if self.error:
            raise self.error
        return []


def scripted_merge(
    user: Any,
    run_id: int = 42,
    merged: str = "x merged",
    sources: tuple[str, ...] = ("x",),
    categories: tuple[str, ...] = ("A",),
    **options: Any,
) -> dict[str, Any]:
    """``ScriptedMergeStore`` options: one finished run ``run_id`` that merged ``sources`` (gone
    since) into the saved note ``merged``."""
    now = timezone.now()
    (note,) = DjangoStore().insert_notes(user.pk, [NewNote(categories, merged)])
    originals = tuple(
        replace(note, id=note.id + 1000 + number, content=text)
        for number, text in enumerate(sources)
    )
    run = OptimizationRun(run_id, user.pk, "succeeded", "default", now, now, finished_at=now)
    item = MergedNote(run_id, 0, note.id, note.version, originals, now)
    return {"runs": [run], "merged": [item], **options}
