"""The merge part of the store contract: runs, leases, backoff, snapshots, revert."""

from __future__ import annotations

from typing import Any

import pytest

from ..errors import DuplicateNote, MergeConflict, NoteNotFound, StaleVersion
from ..kinds import MergeRunStatus, NoteSource
from ..notes import NewNote, Note
from .notes import _StoreFixtures, new


class MergeStoreContract(_StoreFixtures):
    """Behaviour of the merge methods. Override ``store`` and ``people`` as for
    :class:`StoreContract`. Runs, leases, backoff and the optimizer state hold for every store;
    applying and reverting merges only for a store that can merge (``can_merge``)."""

    from datetime import UTC as _UTC
    from datetime import datetime as _datetime
    from datetime import timedelta as _timedelta

    T0 = _datetime(2030, 1, 1, 12, 0, tzinfo=_UTC)
    LEASE = _timedelta(minutes=10)
    DAY = _timedelta(hours=24)

    @pytest.fixture
    def runs(self, store: Any) -> Any:
        """The store, for the runs and the optimizer state (every store keeps them)."""
        return store

    @pytest.fixture
    def merging(self, store: Any) -> Any:
        """The store, for applying and reverting merges (only a store that can merge)."""
        if not store.can_merge:
            pytest.skip("the store cannot merge (can_merge is False: it has no _merge_notes)")
        return store

    def claim(self, store: Any, user: Any, at: Any = None, force: bool = False) -> Any:
        at = at or self.T0
        return store.claim_optimization_run(
            user, model="default", now=at, lease_until=at + self.LEASE, force=force
        )

    def finish(self, store: Any, user: Any, run: Any, ok: bool, at: Any) -> bool:
        from ..stores.base import RunOutcome

        return bool(
            store.finish_optimization_run(
                user, run.id, RunOutcome(ok, error="" if ok else "x"), now=at, interval=self.DAY
            )
        )

    def plan(self, *sources: Note, content: str = "merged", index: int = 0) -> Any:
        from ..stores.base import MergePlan

        return MergePlan(
            group_index=index,
            sources={note.id: note.version for note in sources},
            note=NewNote(categories=("General",), content=content, source=NoteSource.MERGE),
        )

    def merged_pair(self, store: Any, user: Any) -> tuple[Any, Note, list[Note]]:
        sources = store.insert_notes(user, [new("Likes tea"), new("Likes tea a lot")])
        run = self.claim(store, user)
        merged = store.apply_merge(
            user, run.id, self.plan(*sources, content="Likes tea a lot"), now=self.T0
        )
        assert self.finish(store, user, run, True, self.T0)
        return run, merged, sources

    def test_store_follows_the_merge_protocol(self, merging: Any) -> None:
        from ..stores.base import BaseStore

        assert isinstance(merging, BaseStore) and merging.can_merge

    def test_one_live_run_per_person(self, runs: Any, ann: Any, bob: Any) -> None:
        run = self.claim(runs, ann)
        assert run is not None and run.status == MergeRunStatus.RUNNING
        assert self.claim(runs, ann) is None
        assert self.claim(runs, ann, force=True) is None
        assert self.claim(runs, bob) is not None

    def test_success_resets_backoff_and_sets_the_next_run(self, runs: Any, ann: Any) -> None:
        run = self.claim(runs, ann)
        assert self.finish(runs, ann, run, False, self.T0)
        run = self.claim(runs, ann, force=True)
        assert self.finish(runs, ann, run, True, self.T0)
        state = runs.get_optimizer_state(ann)
        assert state.consecutive_failures == 0
        assert state.last_success_at == self.T0
        assert state.next_run_at == self.T0 + self.DAY
        assert self.claim(runs, ann, at=self.T0 + self.DAY / 2) is None

    def test_failures_back_off_1h_6h_24h_24h(self, runs: Any, ann: Any) -> None:
        at = self.T0
        waits = []
        for _ in range(4):
            run = self.claim(runs, ann, at=at)
            assert run is not None
            assert self.finish(runs, ann, run, False, at)
            state = runs.get_optimizer_state(ann)
            waits.append(state.next_run_at - at)
            assert self.claim(runs, ann, at=state.next_run_at - self._timedelta(seconds=1)) is None
            at = state.next_run_at
        hour = self._timedelta(hours=1)
        assert waits == [hour, 6 * hour, 24 * hour, 24 * hour]
        assert runs.get_optimizer_state(ann).consecutive_failures == 4

    def test_expired_lease_is_a_failure_and_its_result_is_discarded(
        self, merging: Any, ann: Any
    ) -> None:
        from ..errors import LeaseExpired

        sources = merging.insert_notes(ann, [new("a"), new("b")])
        run = self.claim(merging, ann)
        late = self.T0 + self.LEASE
        with pytest.raises(LeaseExpired):
            merging.apply_merge(ann, run.id, self.plan(*sources), now=late)
        assert not self.finish(merging, ann, run, True, late)
        # The late merge changed nothing: the sources are there, unchanged.
        assert sorted(merging.list_notes(ann), key=lambda note: note.id) == sorted(
            sources, key=lambda note: note.id
        )
        (closed,) = merging.list_optimization_runs(ann)
        assert closed.status == MergeRunStatus.FAILED
        state = merging.get_optimizer_state(ann)
        assert state.consecutive_failures == 1
        assert state.next_run_at == late + self._timedelta(hours=1)

    def test_a_new_claim_closes_an_expired_run_as_failed(self, runs: Any, ann: Any) -> None:
        first = self.claim(runs, ann)
        late = self.T0 + self.LEASE + self._timedelta(seconds=1)
        assert self.claim(runs, ann, at=late) is None  # failure counted: now backing off
        second = self.claim(runs, ann, at=late, force=True)
        assert second is not None and second.id != first.id
        statuses = {run.id: run.status for run in runs.list_optimization_runs(ann)}
        assert statuses == {first.id: MergeRunStatus.FAILED, second.id: MergeRunStatus.RUNNING}
        assert not self.finish(runs, ann, first, True, late)
        assert runs.get_optimizer_state(ann).consecutive_failures == 1

    def test_apply_replaces_sources_by_a_merge_note_and_keeps_snapshots(
        self, merging: Any, ann: Any
    ) -> None:
        run, merged, sources = self.merged_pair(merging, ann)
        assert merging.list_notes(ann) == [merged]
        expected = (NoteSource.MERGE, 1, "Likes tea a lot")
        assert (merged.source, merged.version, merged.content) == expected
        (kept,) = merging.list_merged_notes(ann)
        assert (kept.run_id, kept.merged_note_id, kept.merged_version) == (run.id, merged.id, 1)
        assert {note.id: note.content for note in kept.sources} == {
            note.id: note.content for note in sources
        }
        (stored,) = merging.list_optimization_runs(ann)
        assert stored.status == MergeRunStatus.SUCCEEDED
        assert stored.applied[0]["merged_id"] == merged.id

    def test_merge_records_who_wrote_and_revert_gives_it_back(self, merging: Any, ann: Any) -> None:
        (mine,) = merging.insert_notes(ann, [new("Likes tea", source=NoteSource.PERSON)])
        (agents,) = merging.insert_notes(ann, [new("Likes tea a lot")])
        merging.update_note(ann, mine.id, 1, new("Likes tea", source=NoteSource.ADMIN))
        (mine,) = [note for note in merging.list_notes(ann) if note.id == mine.id]
        run = self.claim(merging, ann)
        merged = merging.apply_merge(ann, run.id, self.plan(mine, agents), now=self.T0)
        assert (merged.source, merged.created_by) == (NoteSource.MERGE, NoteSource.MERGE)
        assert merging.history(ann, merged.id) == []
        restored = {note.id: note for note in merging.revert_merge(ann, run.id, now=self.T0)}
        assert (restored[mine.id].source, restored[mine.id].created_by) == ("admin", "person")
        assert (restored[agents.id].source, restored[agents.id].created_by) == ("agent", "agent")

    def test_apply_with_a_changed_source_changes_nothing(self, merging: Any, ann: Any) -> None:
        first, second = merging.insert_notes(ann, [new("a"), new("b")])
        run = self.claim(merging, ann)
        merging.update_note(ann, second.id, 1, new("b, edited"))
        with pytest.raises(StaleVersion):
            merging.apply_merge(ann, run.id, self.plan(first, second), now=self.T0)
        assert {note.content for note in merging.list_notes(ann)} == {"a", "b, edited"}
        assert merging.list_merged_notes(ann) == []

    def test_apply_cannot_take_another_persons_note(self, merging: Any, ann: Any, bob: Any) -> None:
        (mine,) = merging.insert_notes(ann, [new("a")])
        (theirs,) = merging.insert_notes(bob, [new("b")])
        run = self.claim(merging, ann)
        with pytest.raises(NoteNotFound):
            merging.apply_merge(ann, run.id, self.plan(mine, theirs), now=self.T0)
        assert merging.list_notes(bob) == [theirs]
        assert merging.list_notes(ann) == [mine]

    def test_apply_refused_by_the_check_changes_nothing(self, merging: Any, ann: Any) -> None:
        sources = merging.insert_notes(ann, [new("a"), new("b")])
        run = self.claim(merging, ann)

        def refuse(others: list[Note], group: list[Note]) -> None:
            assert {note.id for note in group} == {note.id for note in sources}
            raise DuplicateNote("refused")

        with pytest.raises(DuplicateNote):
            merging.apply_merge(ann, run.id, self.plan(*sources), now=self.T0, check=refuse)
        assert len(merging.list_notes(ann)) == 2

    def test_revert_restores_original_ids_with_the_next_version(
        self, merging: Any, ann: Any
    ) -> None:
        run, _, sources = self.merged_pair(merging, ann)
        later = self.T0 + self._timedelta(minutes=5)
        restored = merging.revert_merge(ann, run.id, now=later)
        assert {(note.id, note.version, note.content) for note in restored} == {
            (note.id, note.version + 1, note.content) for note in sources
        }
        assert {note.id for note in merging.list_notes(ann)} == {note.id for note in sources}
        assert merging.list_merged_notes(ann) == []
        with pytest.raises(NoteNotFound):
            merging.revert_merge(ann, run.id, now=later)

    def test_revert_of_one_group_leaves_the_other_group_applied(
        self, merging: Any, ann: Any
    ) -> None:
        tea = merging.insert_notes(ann, [new("Likes tea"), new("Likes tea a lot")])
        jam = merging.insert_notes(ann, [new("Likes jam"), new("Likes jam on toast")])
        run = self.claim(merging, ann)
        merging.apply_merge(ann, run.id, self.plan(*tea, content="Tea", index=0), now=self.T0)
        merging.apply_merge(ann, run.id, self.plan(*jam, content="Jam", index=1), now=self.T0)
        assert self.finish(merging, ann, run, True, self.T0)

        restored = merging.revert_merge(ann, run.id, now=self.T0, group=0)

        assert {note.id for note in restored} == {note.id for note in tea}
        assert [item.group_index for item in merging.list_merged_notes(ann)] == [1]
        with pytest.raises(NoteNotFound):
            merging.revert_merge(ann, run.id, now=self.T0, group=0)
        assert merging.kept_apart(ann) == [tuple(sorted(note.id for note in tea))]
        merging.revert_merge(ann, run.id, now=self.T0, group=1)
        assert merging.list_merged_notes(ann) == []

    def test_deleting_a_merged_note_forgets_its_originals_text(
        self, merging: Any, ann: Any
    ) -> None:
        run, merged, sources = self.merged_pair(merging, ann)
        merging.delete_note(ann, merged.id, merged.version)
        texts = {note.content for note in sources}
        for item in merging.list_merged_notes(ann):
            assert not texts & {note.content for note in item.sources}
        with pytest.raises(MergeConflict):
            merging.revert_merge(ann, run.id, now=self.T0)

    def test_revert_after_the_merged_note_changed_is_a_conflict(
        self, merging: Any, ann: Any
    ) -> None:
        run, merged, _ = self.merged_pair(merging, ann)
        merging.update_note(ann, merged.id, 1, new("Likes tea a lot, green"))
        with pytest.raises(MergeConflict):
            merging.revert_merge(ann, run.id, now=self.T0)
        merging.delete_note(ann, merged.id, 2)
        with pytest.raises(MergeConflict):
            merging.revert_merge(ann, run.id, now=self.T0)
        assert merging.list_notes(ann) == []

    def test_revert_of_another_persons_or_unknown_run_is_not_found(
        self, merging: Any, ann: Any, bob: Any
    ) -> None:
        run, merged, _ = self.merged_pair(merging, ann)
        with pytest.raises(NoteNotFound):
            merging.revert_merge(bob, run.id, now=self.T0)
        with pytest.raises(NoteNotFound):
            merging.revert_merge(ann, run.id + 1000, now=self.T0)
        assert merging.list_notes(ann) == [merged]
        assert merging.list_merged_notes(bob) == []

    def test_checked_revert_refused_by_the_check_changes_nothing(
        self, merging: Any, ann: Any
    ) -> None:
        run, merged, sources = self.merged_pair(merging, ann)
        seen: list[tuple[list[Note], list[Note]]] = []

        def refuse(remaining: list[Note], originals: list[Note]) -> None:
            seen.append((remaining, originals))
            raise DuplicateNote("refused")

        with pytest.raises(DuplicateNote):
            merging.revert_merge_checked(ann, run.id, refuse, now=self.T0)
        assert seen and seen[0][0] == []
        assert {note.id for note in seen[0][1]} == {note.id for note in sources}
        assert merging.list_notes(ann) == [merged]
        assert len(merging.list_merged_notes(ann)) == 1

    def test_clear_purges_the_persons_snapshots(self, merging: Any, ann: Any, bob: Any) -> None:
        self.merged_pair(merging, ann)
        self.merged_pair(merging, bob)
        merging.clear_notes(ann)
        assert merging.list_merged_notes(ann) == []
        assert len(merging.list_merged_notes(bob)) == 1

    def test_runs_are_listed_newest_first_per_person(self, runs: Any, ann: Any, bob: Any) -> None:
        first = self.claim(runs, ann)
        self.finish(runs, ann, first, True, self.T0)
        second = self.claim(runs, ann, at=self.T0 + self.DAY)
        self.claim(runs, bob)
        assert [run.id for run in runs.list_optimization_runs(ann)] == [second.id, first.id]
        assert len(runs.list_optimization_runs(bob)) == 1

    def test_activity_makes_a_person_due(self, runs: Any, ann: Any, bob: Any) -> None:
        assert runs.due_optimizer_users(self.T0) == []
        runs.record_optimizer_activity(ann, at=self.T0, model="fast")
        assert runs.due_optimizer_users(self.T0) == [(ann, "fast")]
        run = self.claim(runs, ann)
        self.finish(runs, ann, run, True, self.T0 + self.LEASE / 2)
        # Succeeded after the last activity: not due, even once the interval has passed.
        assert runs.due_optimizer_users(self.T0 + 2 * self.DAY) == []
        runs.record_optimizer_activity(ann, at=self.T0 + self.DAY / 2, model="fast")
        assert runs.due_optimizer_users(self.T0 + self.DAY / 2) == []
        assert runs.due_optimizer_users(self.T0 + 2 * self.DAY) == [(ann, "fast")]
