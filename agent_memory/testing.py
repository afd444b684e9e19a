"""The store contract test-suite: what every store must do, for any store to run.

Subclass :class:`StoreContract` in a pytest module and provide two fixtures::

    from agent_memory.testing import StoreContract

    class TestMyStore(StoreContract):
        @pytest.fixture
        def store(self, db):
            return MyStore()

        @pytest.fixture
        def people(self, django_user_model):
            make = django_user_model.objects.create_user
            return make("ann").pk, make("bob").pk

Tests of the optional checked writes run only when the store has them. Requires pytest.
"""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import UTC as _UTC
from datetime import datetime as _datetime
from datetime import timedelta as _timedelta
from typing import Any

import pytest

from .errors import DuplicateNote, MergeConflict, NoteNotFound, StaleVersion
from .kinds import MergeRunStatus, NoteSource
from .notes import NewNote, Note
from .rules import note_set
from .stores.base import CHECKED_METHODS, NOTE_METHODS, supports


def new(content: str, *categories: str, source: NoteSource = NoteSource.AGENT) -> NewNote:
    return NewNote(categories=categories or ("General",), content=content, source=source)


def _until(note: NewNote, moment: _datetime) -> NewNote:
    return replace(note, valid_until=moment)


def _now() -> _datetime:
    return _datetime.now(_UTC).replace(microsecond=0)


class _StoreFixtures:
    """The fixtures a contract class needs: override ``store`` and ``people``."""

    @pytest.fixture
    def store(self) -> Any:  # pragma: no cover - overridden
        raise NotImplementedError("Provide a `store` fixture returning the store under test.")

    @pytest.fixture
    def people(self) -> tuple[Any, Any]:  # pragma: no cover - overridden
        raise NotImplementedError("Provide a `people` fixture returning two user primary keys.")

    @pytest.fixture
    def ann(self, people: tuple[Any, Any]) -> Any:
        return people[0]

    @pytest.fixture
    def bob(self, people: tuple[Any, Any]) -> Any:
        return people[1]


class StoreContract(_StoreFixtures):
    """Behaviour every store promises. Override the ``store`` and ``people`` fixtures."""

    def test_store_has_the_five_note_methods(self, store: Any) -> None:
        assert supports(store, NOTE_METHODS)

    def test_new_person_has_no_notes(self, store: Any, ann: Any) -> None:
        assert store.list_notes(ann) == []

    def test_insert_returns_notes_at_version_one_in_the_given_order(
        self, store: Any, ann: Any
    ) -> None:
        created = store.insert_notes(
            ann, [new("Likes tea", "Food"), new("Lives in Riga", "Home", "Places")]
        )
        assert [note.content for note in created] == ["Likes tea", "Lives in Riga"]
        assert all(isinstance(note, Note) and note.version == 1 for note in created)
        assert created[1].categories == ("Home", "Places")
        assert created[0].id != created[1].id
        assert created[0].user_id == ann

    def test_insert_keeps_the_source(self, store: Any, ann: Any) -> None:
        (note,) = store.insert_notes(ann, [new("Prefers dark mode", source=NoteSource.PERSON)])
        assert store.list_notes(ann)[0].source == NoteSource.PERSON == note.source

    def test_list_is_most_recently_changed_first(self, store: Any, ann: Any) -> None:
        first, second = store.insert_notes(ann, [new("one"), new("two")])
        third = store.insert_notes(ann, [new("three")])[0]
        assert next(note.id for note in store.list_notes(ann)) == third.id
        time.sleep(0.002)
        store.update_note(ann, first.id, 1, new("one, edited"))
        assert store.list_notes(ann)[0].id == first.id
        assert {note.id for note in store.list_notes(ann)} == {first.id, second.id, third.id}

    def test_update_bumps_version_and_changes_text(self, store: Any, ann: Any) -> None:
        (note,) = store.insert_notes(ann, [new("Likes tea", "Food")])
        updated = store.update_note(ann, note.id, 1, new("Likes green tea", "Food", "Drinks"))
        assert (updated.id, updated.version) == (note.id, 2)
        assert updated.content == "Likes green tea"
        assert updated.categories == ("Food", "Drinks")
        assert updated.updated_at >= note.updated_at
        assert updated.created_at == note.created_at
        assert store.list_notes(ann) == [updated]

    def test_update_with_old_version_is_stale_and_changes_nothing(
        self, store: Any, ann: Any
    ) -> None:
        (note,) = store.insert_notes(ann, [new("Likes tea")])
        store.update_note(ann, note.id, 1, new("Likes coffee"))
        with pytest.raises(StaleVersion):
            store.update_note(ann, note.id, 1, new("Likes juice"))
        assert store.list_notes(ann)[0].content == "Likes coffee"

    def test_update_of_missing_note_is_not_found(self, store: Any, ann: Any) -> None:
        with pytest.raises(NoteNotFound):
            store.update_note(ann, 987654, 1, new("x"))

    def test_another_persons_note_is_not_found_for_every_method(
        self, store: Any, ann: Any, bob: Any
    ) -> None:
        (note,) = store.insert_notes(ann, [new("Ann's secret recipe")])
        assert store.list_notes(bob) == []
        with pytest.raises(NoteNotFound):
            store.update_note(bob, note.id, 1, new("taken over"))
        with pytest.raises(NoteNotFound):
            store.delete_note(bob, note.id, 1)
        assert store.clear_notes(bob) == 0
        assert store.list_notes(ann) == [note]

    def test_delete_needs_the_current_version(self, store: Any, ann: Any) -> None:
        (note,) = store.insert_notes(ann, [new("Likes tea")])
        store.update_note(ann, note.id, 1, new("Likes coffee"))
        with pytest.raises(StaleVersion):
            store.delete_note(ann, note.id, 1)
        store.delete_note(ann, note.id, 2)
        assert store.list_notes(ann) == []
        with pytest.raises(NoteNotFound):
            store.delete_note(ann, note.id, 2)

    def test_ids_are_never_reused(self, store: Any, ann: Any) -> None:
        (note,) = store.insert_notes(ann, [new("temporary")])
        store.delete_note(ann, note.id, 1)
        (again,) = store.insert_notes(ann, [new("temporary")])
        assert again.id > note.id

    def test_clear_deletes_only_this_persons_notes(self, store: Any, ann: Any, bob: Any) -> None:
        store.insert_notes(ann, [new("a"), new("b")])
        (kept,) = store.insert_notes(bob, [new("c")])
        assert store.clear_notes(ann) == 2
        assert store.list_notes(ann) == []
        assert store.list_notes(bob) == [kept]

    def test_insert_and_update_keep_whether_the_note_is_pinned(self, store: Any, ann: Any) -> None:
        rule = NewNote(("Rules",), "Never suggest npm", NoteSource.PERSON, pinned=True)
        (note,) = store.insert_notes(ann, [rule])
        (plain,) = store.insert_notes(ann, [new("Likes tea")])
        assert note.pinned and not plain.pinned
        # An update that does not say (pinned=None) keeps the note as it is.
        edited = store.update_note(ann, note.id, 1, new("Never suggest npm or yarn", "Rules"))
        assert (edited.pinned, edited.version) == (True, 2)
        unpinned = store.update_note(ann, note.id, 2, replace(rule, pinned=False))
        assert (unpinned.pinned, unpinned.version) == (False, 3)
        assert {n.id: n.pinned for n in store.list_notes(ann)} == {note.id: False, plain.id: False}
        pinned = store.update_note(ann, plain.id, 1, replace(rule, content="Likes tea"))
        assert pinned.pinned
        assert {n.id: n.pinned for n in store.list_notes(ann)} == {note.id: False, plain.id: True}

    # --- the person's memory switch ----------------------------------------------------------

    def test_memory_is_on_until_the_person_turns_it_off(
        self, store: Any, ann: Any, bob: Any
    ) -> None:
        assert store.memory_enabled(ann) is True
        store.set_memory_enabled(ann, False)
        assert store.memory_enabled(ann) is False
        assert store.memory_enabled(bob) is True
        store.set_memory_enabled(ann, True)
        assert store.memory_enabled(ann) is True

    def test_turning_memory_off_keeps_the_notes_and_the_counts(self, store: Any, ann: Any) -> None:
        store.insert_notes(ann, [new("Likes tea"), new("Lives in Riga")])
        store.set_memory_enabled(ann, False)
        assert sorted(note.content for note in store.list_notes(ann)) == [
            "Likes tea",
            "Lives in Riga",
        ]
        if supports(store, CHECKED_METHODS):
            seen: list[int] = []
            store.insert_notes_checked(
                ann, [new("Reads sci-fi")], lambda notes: seen.append(note_set(notes).note_count)
            )
            assert seen == [2]
        assert store.memory_enabled(ann) is False

    # --- optional: checked writes ----------------------------------------------------------

    @pytest.fixture
    def checked_store(self, store: Any) -> Any:
        if not supports(store, CHECKED_METHODS):
            pytest.skip("the store has no checked writes")
        return store

    def test_checked_insert_sees_current_notes_and_writes(
        self, checked_store: Any, ann: Any, bob: Any
    ) -> None:
        (existing,) = checked_store.insert_notes(ann, [new("Likes tea")])
        checked_store.insert_notes(bob, [new("Likes tea"), new("Likes cocoa")])
        seen: list[tuple[int, int, list[Note], list[Note]]] = []

        def look(notes: Any) -> None:
            held = note_set(notes)  # valid while the check runs
            same = list(held.with_texts(["  LIKES   tea "]))
            others = list(held.with_texts(["Likes jazz", "Likes cocoa"]))
            seen.append((held.note_count, held.total_chars, same, others))

        created = checked_store.insert_notes_checked(ann, [new("Likes jazz")], look)
        # The check sees the person's notes as they were before this write (a list of them, or
        # counts plus a lookup by text): only Ann's, and the new one not yet.
        assert seen == [(1, len("Likes tea"), [existing], [])]
        assert {note.id for note in checked_store.list_notes(ann)} == {existing.id, created[0].id}

    def test_checked_writes_see_counts_that_follow_every_write(
        self, checked_store: Any, ann: Any
    ) -> None:
        seen: list[tuple[int, int]] = []

        def counts(notes: Any, current: Any = None) -> None:
            held = note_set(notes)
            seen.append((held.note_count, held.total_chars))

        tea, cocoa = checked_store.insert_notes(ann, [new("Likes tea"), new("Likes cocoa")])
        checked_store.insert_notes_checked(ann, [new("x")], counts)
        assert seen[-1] == (2, 20)
        checked_store.update_note(ann, tea.id, 1, new("Likes green tea"))
        checked_store.update_note_checked(ann, cocoa.id, 1, new("Likes hot cocoa"), counts)
        assert seen[-1] == (3, 27)
        checked_store.delete_note(ann, tea.id, 2)
        checked_store.insert_notes_checked(ann, [new("y")], counts)
        assert seen[-1] == (2, 16)
        with pytest.raises(DuplicateNote):
            checked_store.insert_notes_checked(ann, [new("z")], self._refuse)
        checked_store.clear_notes(ann)
        checked_store.insert_notes_checked(ann, [new("Likes tea")], counts)
        assert seen[-1] == (0, 0)

    def test_checked_update_looks_up_the_new_text(self, checked_store: Any, ann: Any) -> None:
        tea, cocoa = checked_store.insert_notes(ann, [new("Likes tea"), new("Likes cocoa")])
        checked_store.update_note(ann, tea.id, 1, new("Likes jazz"))
        found: list[list[Note]] = []

        def look(notes: Any, current: Note) -> None:
            held = note_set(notes)
            found.append(list(held.with_texts(["likes JAZZ"])))
            found.append(list(held.with_texts(["Likes tea"])))

        checked_store.update_note_checked(ann, cocoa.id, 1, new("Likes jazz"), look)
        (jazz,) = found[0]
        assert (jazz.id, jazz.content, jazz.version) == (tea.id, "Likes jazz", 2)
        assert found[1] == []

    @staticmethod
    def _refuse(notes: Any) -> None:
        raise DuplicateNote("refused")

    def test_checked_insert_refused_by_check_writes_nothing(
        self, checked_store: Any, ann: Any
    ) -> None:
        with pytest.raises(DuplicateNote):
            checked_store.insert_notes_checked(ann, [new("a"), new("b")], self._refuse)
        assert checked_store.list_notes(ann) == []

    def test_checked_update_checks_version_before_the_callback(
        self, checked_store: Any, ann: Any
    ) -> None:
        (note,) = checked_store.insert_notes(ann, [new("Likes tea")])
        calls: list[tuple[int, int, list[Note], Note]] = []

        def check(existing: Any, current: Note) -> None:
            held = note_set(existing)
            same = list(held.with_texts(["Likes tea"]))
            calls.append((held.note_count, held.total_chars, same, current))

        with pytest.raises(StaleVersion):
            checked_store.update_note_checked(ann, note.id, 7, new("x"), check)
        with pytest.raises(NoteNotFound):
            checked_store.update_note_checked(ann, note.id + 1000, 1, new("x"), check)
        assert calls == []
        updated = checked_store.update_note_checked(ann, note.id, 1, new("Likes coffee"), check)
        assert calls == [(1, len("Likes tea"), [note], note)]
        assert updated.version == 2
        assert checked_store.list_notes(ann) == [updated]

    def test_checked_update_refused_by_check_changes_nothing(
        self, checked_store: Any, ann: Any
    ) -> None:
        (note,) = checked_store.insert_notes(ann, [new("Likes tea")])

        def refuse(existing: list[Note], current: Note) -> None:
            raise DuplicateNote("refused")

        with pytest.raises(DuplicateNote):
            checked_store.update_note_checked(ann, note.id, 1, new("Likes coffee"), refuse)
        assert checked_store.list_notes(ann) == [note]

    # --- the note's lifecycle: created_by, valid_until, earlier versions ------------------

    def test_created_by_is_the_first_writer_and_stays(self, store: Any, ann: Any) -> None:
        (note,) = store.insert_notes(ann, [new("Likes tea", source=NoteSource.PERSON)])
        assert (note.source, note.created_by) == (NoteSource.PERSON, NoteSource.PERSON)
        changed = store.update_note(ann, note.id, 1, new("Likes green tea"))
        assert (changed.source, changed.created_by) == (NoteSource.AGENT, NoteSource.PERSON)
        assert store.list_notes(ann)[0].created_by == NoteSource.PERSON

    def test_valid_until_is_kept_and_an_update_replaces_it(self, store: Any, ann: Any) -> None:
        soon, later = _now() + _timedelta(days=2), _now() + _timedelta(days=9)
        (note,) = store.insert_notes(ann, [_until(new("In Berlin"), soon)])
        assert store.list_notes(ann)[0].valid_until == soon
        changed = store.update_note(ann, note.id, 1, _until(new("In Berlin"), later))
        assert changed.valid_until == later == store.list_notes(ann)[0].valid_until
        cleared = store.update_note(ann, note.id, 2, new("In Berlin"))
        assert cleared.valid_until is None and store.list_notes(ann)[0].valid_until is None

    def test_a_note_past_its_valid_until_is_gone_for_readers_and_writers(
        self, store: Any, ann: Any
    ) -> None:
        past = _now() - _timedelta(seconds=1)
        kept, gone = store.insert_notes(ann, [new("Lives in Riga"), _until(new("In Berlin"), past)])
        assert store.list_notes(ann) == [kept]
        with pytest.raises(NoteNotFound):
            store.update_note(ann, gone.id, 1, new("In Paris"))
        with pytest.raises(NoteNotFound):
            store.delete_note(ann, gone.id, 1)
        with pytest.raises(NoteNotFound):
            store.history(ann, gone.id)

    def test_purge_expired_deletes_the_passed_notes_of_everyone(
        self, store: Any, ann: Any, bob: Any
    ) -> None:
        now = _now()
        (stays,) = store.insert_notes(ann, [_until(new("In Berlin"), now + _timedelta(days=1))])
        (ends,) = store.insert_notes(ann, [_until(new("At the fair"), now + _timedelta(hours=1))])
        (bobs,) = store.insert_notes(bob, [_until(new("On leave"), now + _timedelta(hours=1))])
        assert store.purge_expired(now) == {}
        purged = store.purge_expired(now + _timedelta(hours=2))
        assert purged == {ann: [ends.id], bob: [bobs.id]}
        assert [note.id for note in store.list_notes(ann)] == [stays.id]
        assert store.purge_expired(now + _timedelta(hours=2)) == {}
        assert store.purge_expired(now + _timedelta(days=2), user_id=bob) == {}

    def test_each_change_keeps_the_previous_version_newest_first(
        self, store: Any, ann: Any
    ) -> None:
        (note,) = store.insert_notes(ann, [new("Likes tea", "Food", source=NoteSource.PERSON)])
        assert store.history(ann, note.id) == []
        store.update_note(ann, note.id, 1, new("Likes green tea", "Food"))
        store.update_note(ann, note.id, 2, new("Likes white tea", "Food", "Drinks"))
        first, second = store.history(ann, note.id)
        assert (first.version, first.content, first.source) == (2, "Likes green tea", "agent")
        assert (second.version, second.content, second.source) == (1, "Likes tea", "person")
        assert second.categories == ("Food",) and second.changed_at == note.updated_at

    def test_history_keeps_the_last_ten_versions(self, store: Any, ann: Any) -> None:
        (note,) = store.insert_notes(ann, [new("Version 1")])
        for version in range(1, 13):
            store.update_note(ann, note.id, version, new(f"Version {version + 1}"))
        kept = store.history(ann, note.id)
        assert [item.version for item in kept] == list(range(12, 2, -1))

    def test_history_ends_with_its_note_and_is_private(
        self, store: Any, ann: Any, bob: Any
    ) -> None:
        (note,) = store.insert_notes(ann, [new("Likes tea")])
        store.update_note(ann, note.id, 1, new("Likes coffee"))
        with pytest.raises(NoteNotFound):
            store.history(bob, note.id)
        store.delete_note(ann, note.id, 2)
        with pytest.raises(NoteNotFound):
            store.history(ann, note.id)

    def test_checked_update_keeps_the_previous_version_too(
        self, checked_store: Any, ann: Any
    ) -> None:
        (note,) = checked_store.insert_notes(ann, [new("Likes tea")])

        def check(existing: Any, current: Note) -> None:
            pass

        checked_store.update_note_checked(ann, note.id, 1, new("Likes coffee"), check)
        assert [item.content for item in checked_store.history(ann, note.id)] == ["Likes tea"]

        def refuse(existing: Any, current: Note) -> None:
            raise DuplicateNote("refused")

        with pytest.raises(DuplicateNote):
            checked_store.update_note_checked(ann, note.id, 2, new("Likes cocoa"), refuse)
        assert [item.content for item in checked_store.history(ann, note.id)] == ["Likes tea"]


# --- the merge methods: runs, leases, backoff, snapshots, revert -------------------------------


class MergeStoreContract(_StoreFixtures):
    """Behaviour of the optional merge methods. Override ``store`` and ``people`` as for
    :class:`StoreContract`; the whole class is skipped for a store without merge methods."""

    from datetime import UTC as _UTC
    from datetime import datetime as _datetime
    from datetime import timedelta as _timedelta

    T0 = _datetime(2030, 1, 1, 12, 0, tzinfo=_UTC)
    LEASE = _timedelta(minutes=10)
    DAY = _timedelta(hours=24)

    @pytest.fixture
    def merging(self, store: Any) -> Any:
        from .stores.base import MERGE_METHODS

        if not supports(store, MERGE_METHODS):
            pytest.skip("the store has no merge methods")
        return store

    def claim(self, store: Any, user: Any, at: Any = None, force: bool = False) -> Any:
        at = at or self.T0
        return store.claim_optimization_run(
            user, model="default", now=at, lease_until=at + self.LEASE, force=force
        )

    def finish(self, store: Any, user: Any, run: Any, ok: bool, at: Any) -> bool:
        from .stores.base import RunOutcome

        return bool(
            store.finish_optimization_run(
                user, run.id, RunOutcome(ok, error="" if ok else "x"), now=at, interval=self.DAY
            )
        )

    def plan(self, *sources: Note, content: str = "merged", index: int = 0) -> Any:
        from .stores.base import MergePlan

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
        from .stores.base import MergeStore

        assert isinstance(merging, MergeStore)

    def test_one_live_run_per_person(self, merging: Any, ann: Any, bob: Any) -> None:
        run = self.claim(merging, ann)
        assert run is not None and run.status == MergeRunStatus.RUNNING
        assert self.claim(merging, ann) is None
        assert self.claim(merging, ann, force=True) is None
        assert self.claim(merging, bob) is not None

    def test_success_resets_backoff_and_sets_the_next_run(self, merging: Any, ann: Any) -> None:
        run = self.claim(merging, ann)
        assert self.finish(merging, ann, run, False, self.T0)
        run = self.claim(merging, ann, force=True)
        assert self.finish(merging, ann, run, True, self.T0)
        state = merging.get_optimizer_state(ann)
        assert state.consecutive_failures == 0
        assert state.last_success_at == self.T0
        assert state.next_run_at == self.T0 + self.DAY
        assert self.claim(merging, ann, at=self.T0 + self.DAY / 2) is None

    def test_failures_back_off_1h_6h_24h_24h(self, merging: Any, ann: Any) -> None:
        at = self.T0
        waits = []
        for _ in range(4):
            run = self.claim(merging, ann, at=at)
            assert run is not None
            assert self.finish(merging, ann, run, False, at)
            state = merging.get_optimizer_state(ann)
            waits.append(state.next_run_at - at)
            assert (
                self.claim(merging, ann, at=state.next_run_at - self._timedelta(seconds=1)) is None
            )
            at = state.next_run_at
        hour = self._timedelta(hours=1)
        assert waits == [hour, 6 * hour, 24 * hour, 24 * hour]
        assert merging.get_optimizer_state(ann).consecutive_failures == 4

    def test_expired_lease_is_a_failure_and_its_result_is_discarded(
        self, merging: Any, ann: Any
    ) -> None:
        from .errors import LeaseExpired

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

    def test_a_new_claim_closes_an_expired_run_as_failed(self, merging: Any, ann: Any) -> None:
        first = self.claim(merging, ann)
        late = self.T0 + self.LEASE + self._timedelta(seconds=1)
        assert self.claim(merging, ann, at=late) is None  # failure counted: now backing off
        second = self.claim(merging, ann, at=late, force=True)
        assert second is not None and second.id != first.id
        statuses = {run.id: run.status for run in merging.list_optimization_runs(ann)}
        assert statuses == {first.id: MergeRunStatus.FAILED, second.id: MergeRunStatus.RUNNING}
        assert not self.finish(merging, ann, first, True, late)
        assert merging.get_optimizer_state(ann).consecutive_failures == 1

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
        if callable(getattr(merging, "kept_apart", None)):
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
        from .errors import MergeConflict

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
        if not callable(getattr(merging, "revert_merge_checked", None)):
            pytest.skip("the store has no checked revert")
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

    def test_runs_are_listed_newest_first_per_person(
        self, merging: Any, ann: Any, bob: Any
    ) -> None:
        first = self.claim(merging, ann)
        self.finish(merging, ann, first, True, self.T0)
        second = self.claim(merging, ann, at=self.T0 + self.DAY)
        self.claim(merging, bob)
        assert [run.id for run in merging.list_optimization_runs(ann)] == [second.id, first.id]
        assert len(merging.list_optimization_runs(bob)) == 1

    def test_activity_makes_a_person_due(self, merging: Any, ann: Any, bob: Any) -> None:
        if not callable(getattr(merging, "due_optimizer_users", None)):
            pytest.skip("the store keeps no optimizer state")
        assert merging.due_optimizer_users(self.T0) == []
        merging.record_optimizer_activity(ann, at=self.T0, model="fast")
        assert merging.due_optimizer_users(self.T0) == [(ann, "fast")]
        run = self.claim(merging, ann)
        self.finish(merging, ann, run, True, self.T0 + self.LEASE / 2)
        # Succeeded after the last activity: not due, even once the interval has passed.
        assert merging.due_optimizer_users(self.T0 + 2 * self.DAY) == []
        merging.record_optimizer_activity(ann, at=self.T0 + self.DAY / 2, model="fast")
        assert merging.due_optimizer_users(self.T0 + self.DAY / 2) == []
        assert merging.due_optimizer_users(self.T0 + 2 * self.DAY) == [(ann, "fast")]
