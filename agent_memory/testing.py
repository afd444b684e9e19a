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
from typing import Any

import pytest

from .errors import DuplicateNote, NoteNotFound, StaleVersion
from .notes import NewNote, Note
from .stores.base import CHECKED_METHODS, NOTE_METHODS, supports


def new(content: str, *categories: str, source: str = "agent") -> NewNote:
    return NewNote(categories=categories or ("General",), content=content, source=source)


class StoreContract:
    """Behaviour every store promises (SPEC §10). Override the ``store`` and ``people`` fixtures."""

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
        (note,) = store.insert_notes(ann, [new("Prefers dark mode", source="person")])
        assert store.list_notes(ann)[0].source == "person" == note.source

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

    # --- optional: checked writes ----------------------------------------------------------

    @pytest.fixture
    def checked_store(self, store: Any) -> Any:
        if not supports(store, CHECKED_METHODS):
            pytest.skip("the store has no checked writes")
        return store

    def test_checked_insert_sees_current_notes_and_writes(
        self, checked_store: Any, ann: Any
    ) -> None:
        (existing,) = checked_store.insert_notes(ann, [new("Likes tea")])
        seen: list[list[Note]] = []
        created = checked_store.insert_notes_checked(ann, [new("Likes jazz")], seen.append)
        assert seen == [[existing]]
        assert {note.id for note in checked_store.list_notes(ann)} == {existing.id, created[0].id}

    def test_checked_insert_refused_by_check_writes_nothing(
        self, checked_store: Any, ann: Any
    ) -> None:
        def refuse(existing: list[Note]) -> None:
            raise DuplicateNote("refused")

        with pytest.raises(DuplicateNote):
            checked_store.insert_notes_checked(ann, [new("a"), new("b")], refuse)
        assert checked_store.list_notes(ann) == []

    def test_checked_update_checks_version_before_the_callback(
        self, checked_store: Any, ann: Any
    ) -> None:
        (note,) = checked_store.insert_notes(ann, [new("Likes tea")])
        calls: list[tuple[list[Note], Note]] = []

        def check(existing: list[Note], current: Note) -> None:
            calls.append((existing, current))

        with pytest.raises(StaleVersion):
            checked_store.update_note_checked(ann, note.id, 7, new("x"), check)
        with pytest.raises(NoteNotFound):
            checked_store.update_note_checked(ann, note.id + 1000, 1, new("x"), check)
        assert calls == []
        updated = checked_store.update_note_checked(ann, note.id, 1, new("Likes coffee"), check)
        assert calls == [([note], note)]
        assert updated.version == 2

    def test_checked_update_refused_by_check_changes_nothing(
        self, checked_store: Any, ann: Any
    ) -> None:
        (note,) = checked_store.insert_notes(ann, [new("Likes tea")])

        def refuse(existing: list[Note], current: Note) -> None:
            raise DuplicateNote("refused")

        with pytest.raises(DuplicateNote):
            checked_store.update_note_checked(ann, note.id, 1, new("Likes coffee"), refuse)
        assert checked_store.list_notes(ann) == [note]
