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

The store is a :class:`~agent_memory.stores.base.BaseStore`; a store that writes only the five
note methods passes it on the base's defaults. Requires pytest.
"""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import UTC as _UTC
from datetime import datetime as _datetime
from datetime import timedelta as _timedelta
from typing import Any

import pytest

from ..errors import DuplicateNote, NoteNotFound, ReadOnlyNote, StaleVersion
from ..kinds import NoteSource
from ..notes import NewNote, Note
from ..rules import note_set
from ..stores.base import BaseStore
from ..stores.values import Guarded, Room, UnpinnedOnly


def new(content: str, *categories: str, source: NoteSource = NoteSource.AGENT) -> NewNote:
    return NewNote(categories=categories or ("General",), content=content, source=source)


def _until(note: NewNote, moment: _datetime) -> NewNote:
    return replace(note, valid_until=moment)


def _edit(store: Any, user_id: Any, note_id: int, version: int, note: NewNote) -> Note:
    """An update as every caller writes it: checked (the check lets everything through)."""
    updated: Note = store.update_note_checked(
        user_id, note_id, version, note, lambda notes, current: None
    )
    return updated


def _no_check(notes: Any, current: Any = None) -> None:
    """A check that lets every write through."""


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

    def test_store_is_a_base_store(self, store: Any) -> None:
        assert isinstance(store, BaseStore)

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
        seen: list[int] = []
        store.insert_notes_checked(
            ann, [new("Reads sci-fi")], lambda notes: seen.append(note_set(notes).note_count)
        )
        assert seen == [2]
        assert store.memory_enabled(ann) is False

    # --- checked writes ---------------------------------------------------------------------

    @pytest.fixture
    def checked_store(self, store: Any) -> Any:
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

    def test_a_guarded_check_is_called_wherever_its_room_does_not_hold(
        self, checked_store: Any, ann: Any
    ) -> None:
        # A check with a Room: a store may leave the call out only where the room holds.
        (tea,) = checked_store.insert_notes(ann, [new("Likes tea")])
        no_room = Room(max_notes=0, max_total_chars=0)
        calls: list[str] = []

        def passes(notes: Any, current: Any = None) -> None:
            calls.append("create" if current is None else "update")

        with pytest.raises(DuplicateNote):
            checked_store.insert_notes_checked(
                ann, [new("Likes jazz")], Guarded(self._refuse, no_room)
            )
        with pytest.raises(DuplicateNote):
            checked_store.update_note_checked(
                ann, tea.id, 1, new("Likes green tea"), Guarded(self._refuse, no_room)
            )
        assert [(note.content, note.version) for note in checked_store.list_notes(ann)] == [
            ("Likes tea", 1)
        ]
        checked_store.insert_notes_checked(ann, [new("Likes jazz")], Guarded(passes, no_room))
        checked_store.update_note_checked(
            ann, tea.id, 1, new("Likes green tea"), Guarded(passes, no_room)
        )
        assert calls == ["create", "update"]
        assert sorted(note.content for note in checked_store.list_notes(ann)) == [
            "Likes green tea",
            "Likes jazz",
        ]

    def test_a_guarded_write_whose_room_holds_is_written_and_counted(
        self, checked_store: Any, ann: Any
    ) -> None:
        room = Room(max_notes=10, max_total_chars=1000)
        (tea,) = checked_store.insert_notes_checked(
            ann, [new("Likes tea")], Guarded(_no_check, room)
        )
        jazz, rock = checked_store.insert_notes_checked(
            ann, [new("Likes jazz"), new("Likes rock")], Guarded(_no_check, room)
        )
        green = checked_store.update_note_checked(
            ann, tea.id, 1, new("Likes green tea", "Drinks"), Guarded(_no_check, room)
        )
        assert (green.id, green.version, green.categories) == (tea.id, 2, ("Drinks",))
        assert [version.content for version in checked_store.history(ann, tea.id)] == ["Likes tea"]
        checked_store.delete_note(ann, rock.id, 1)
        assert {(note.id, note.content) for note in checked_store.list_notes(ann)} == {
            (tea.id, "Likes green tea"),
            (jazz.id, "Likes jazz"),
        }
        seen: list[tuple[int, int]] = []

        def counts(notes: Any) -> None:
            held = note_set(notes)
            seen.append((held.note_count, held.total_chars))

        checked_store.insert_notes_checked(ann, [new("x")], counts)
        assert seen == [(2, len("Likes green tea") + len("Likes jazz"))]

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
    def _refuse(notes: Any, current: Any = None) -> None:
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

    def test_checked_delete_checks_version_then_the_note_then_deletes(
        self, checked_store: Any, ann: Any
    ) -> None:
        tea, rule = checked_store.insert_notes(ann, [new("Likes tea"), new("Call me Ann")])
        rule = checked_store.update_note(ann, rule.id, 1, replace(new("Call me Ann"), pinned=True))
        seen: list[Note] = []

        def unpinned(note: Note) -> None:
            seen.append(note)
            if note.pinned:
                raise ReadOnlyNote.for_pinned(note.id)

        for check in (unpinned, UnpinnedOnly(unpinned)):
            with pytest.raises(StaleVersion):
                checked_store.delete_note_checked(ann, tea.id, 7, check)
            with pytest.raises(NoteNotFound):
                checked_store.delete_note_checked(ann, tea.id + 1000, 1, check)
            # A pinned note refused by the check stays, whatever the store tested first.
            with pytest.raises(ReadOnlyNote):
                checked_store.delete_note_checked(ann, rule.id, rule.version, check)
        assert seen == [rule, rule]
        checked_store.delete_note_checked(ann, tea.id, 1, UnpinnedOnly(unpinned))
        assert checked_store.list_notes(ann) == [rule]
        checked_store.delete_note_checked(ann, rule.id, rule.version, _no_check)
        assert checked_store.list_notes(ann) == []

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

    def test_purge_expired_deletes_the_passed_notes_of_the_person(
        self, store: Any, ann: Any, bob: Any
    ) -> None:
        now = _now()
        (stays,) = store.insert_notes(ann, [_until(new("In Berlin"), now + _timedelta(days=1))])
        (ends,) = store.insert_notes(ann, [_until(new("At the fair"), now + _timedelta(hours=1))])
        (bobs,) = store.insert_notes(bob, [_until(new("On leave"), now + _timedelta(hours=1))])
        assert store.purge_expired(now, user_id=ann) == {}
        later = now + _timedelta(hours=2)
        assert store.purge_expired(later, user_id=ann) == {ann: [ends.id]}
        assert [note.id for note in store.list_notes(ann)] == [stays.id]
        assert [note.id for note in store.list_notes(bob)] == [bobs.id]
        assert store.purge_expired(later, user_id=ann) == {}

    def test_each_change_keeps_the_previous_version_newest_first(
        self, store: Any, ann: Any
    ) -> None:
        (note,) = store.insert_notes(ann, [new("Likes tea", "Food", source=NoteSource.PERSON)])
        assert store.history(ann, note.id) == []
        _edit(store, ann, note.id, 1, new("Likes green tea", "Food"))
        _edit(store, ann, note.id, 2, new("Likes white tea", "Food", "Drinks"))
        first, second = store.history(ann, note.id)
        assert (first.version, first.content, first.source) == (2, "Likes green tea", "agent")
        assert (second.version, second.content, second.source) == (1, "Likes tea", "person")
        assert second.categories == ("Food",) and second.changed_at == note.updated_at

    def test_history_keeps_the_last_ten_versions(self, store: Any, ann: Any) -> None:
        (note,) = store.insert_notes(ann, [new("Version 1")])
        for version in range(1, 13):
            _edit(store, ann, note.id, version, new(f"Version {version + 1}"))
        kept = store.history(ann, note.id)
        assert [item.version for item in kept] == list(range(12, 2, -1))

    def test_history_ends_with_its_note_and_is_private(
        self, store: Any, ann: Any, bob: Any
    ) -> None:
        (note,) = store.insert_notes(ann, [new("Likes tea")])
        _edit(store, ann, note.id, 1, new("Likes coffee"))
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
