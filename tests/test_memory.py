"""``LongTermMemory``, the front door for code: operations, errors, users, stores."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser

from agent_memory import LongTermMemory
from agent_memory.errors import (
    AgentMemoryError,
    DuplicateNote,
    InvalidNote,
    LimitReached,
    MemoryStorageNotSupportedError,
    MergeConflict,
    NoteNotFound,
    StaleVersion,
)
from agent_memory.models import MemoryNote
from agent_memory.stores.in_memory import InMemoryStore
from agent_memory.stores.orm import DjangoStore

from .test_limits import NoteMethodsOnly


def item(content: str, *categories: str) -> dict[str, Any]:
    return {"categories": list(categories or ["General"]), "content": content}


# --- the operations ---------------------------------------------------------------------------


def test_create_returns_the_saved_notes_in_order_at_version_one(memory, person):
    first, second = memory.create_notes(
        person, [item(" Likes tea ", " Food "), item("Lives in Riga", "Home", "City")]
    )
    assert (first.content, first.categories, first.version) == ("Likes tea", ("Food",), 1)
    assert (second.content, second.categories, second.version) == (
        "Lives in Riga",
        ("Home", "City"),
        1,
    )
    assert first.source == second.source == "agent"
    assert first.id != second.id
    assert first.key == f"memory:{first.id}"


@pytest.mark.parametrize("source", ["agent", "person", "merge", "admin"])
def test_create_and_update_record_who_wrote_the_note(memory, person, source):
    (note,) = memory.create_notes(person, [item("Likes tea")], source=source)
    assert note.source == source
    assert memory.notes(person)[0].source == source
    updated = memory.update_note(person, note.id, 1, ["General"], "Likes green tea")
    assert updated.source == "agent"
    memory.update_note(person, note.id, 2, ["General"], "Likes tea again", source=source)
    assert memory.notes(person)[0].source == source


def test_notes_are_most_recently_changed_first(memory, person):
    a, b, c = memory.create_notes(person, [item("a"), item("b"), item("c")])
    memory.update_note(person, a.id, 1, ["General"], "a, changed")
    notes = memory.notes(person)
    assert notes[0].id == a.id
    assert {note.id for note in notes} == {a.id, b.id, c.id}


def test_update_bumps_the_version_and_keeps_the_id(memory, person):
    (note,) = memory.create_notes(person, [item("Likes tea", "Food")])
    updated = memory.update_note(person, note.id, 1, [" Drinks "], " Likes green tea ")
    assert (updated.id, updated.version) == (note.id, 2)
    assert (updated.categories, updated.content) == (("Drinks",), "Likes green tea")
    assert updated.updated_at >= note.updated_at
    assert memory.notes(person) == [updated]


def test_ids_and_versions_are_accepted_as_numbers_keys_and_digit_strings(memory, person):
    (note,) = memory.create_notes(person, [item("Likes tea")])
    memory.update_note(person, note.key, "1", ["General"], "Likes green tea")
    memory.update_note(person, str(note.id), 2, ["General"], "Likes black tea")
    assert memory.delete_note(person, f" memory:{note.id} ", 3) == note.id
    assert memory.notes(person) == []


def test_delete_removes_only_that_note(memory, person):
    a, b = memory.create_notes(person, [item("a"), item("b")])
    assert memory.delete_note(person, a.id, a.version) == a.id
    assert memory.notes(person) == [b]


def test_clear_erases_only_this_persons_notes_and_counts_them(memory, people):
    ann, bob = people
    memory.create_notes(ann, [item("a"), item("b"), item("c")])
    memory.create_notes(bob, [item("Bob's")])
    assert memory.clear(ann) == 3
    assert memory.notes(ann) == []
    assert [note.content for note in memory.notes(bob)] == ["Bob's"]
    assert memory.clear(ann) == 0


def test_search_through_the_front_door(memory, person):
    memory.create_notes(person, [item("Prefers aisle seats on flights", "Travel")])
    result = memory.search(person, "flight seat")
    assert [note.content for note in result.notes] == ["Prefers aisle seats on flights"]
    assert result.total == 1


@pytest.mark.parametrize("query", ["", "   ", None, 5, ["tea"]])
def test_search_needs_a_text_query(memory, person, query):
    with pytest.raises(InvalidNote, match="query must be non-empty text"):
        memory.search(person, query)


# --- errors carry kinds and say what to do --------------------------------------------------------


def test_error_classes_have_their_kinds_and_none_is_the_builtin_memory_error():
    kinds = {
        InvalidNote: "invalid",
        DuplicateNote: "duplicate",
        LimitReached: "limit_reached",
        NoteNotFound: "not_found",
        StaleVersion: "stale_version",
        MergeConflict: "conflict",
    }
    for cls, kind in kinds.items():
        assert issubclass(cls, AgentMemoryError)
        assert not issubclass(cls, MemoryError)
        error = cls("what to do next")
        assert (error.kind, error.message, str(error)) == (kind, "what to do next", error.message)
        assert error.as_dict() == {"error": {"kind": kind, "message": "what to do next"}}


def test_update_with_an_old_version_is_stale_version_and_changes_nothing(memory, person):
    (note,) = memory.create_notes(person, [item("Likes tea")])
    memory.update_note(person, note.id, 1, ["General"], "Likes green tea")
    with pytest.raises(StaleVersion) as refused:
        memory.update_note(person, note.id, 1, ["General"], "Likes coffee")
    assert refused.value.kind == "stale_version"
    assert "you sent version 1, it is now version 2" in refused.value.message
    assert "Search for it again" in refused.value.message
    assert [n.content for n in memory.notes(person)] == ["Likes green tea"]


def test_delete_with_an_old_version_is_stale_version_and_keeps_the_note(memory, person):
    (note,) = memory.create_notes(person, [item("Likes tea")])
    memory.update_note(person, note.id, 1, ["General"], "Likes green tea")
    with pytest.raises(StaleVersion):
        memory.delete_note(person, note.id, 1)
    assert len(memory.notes(person)) == 1


def test_missing_note_is_not_found_and_says_to_search_again(memory, person):
    with pytest.raises(NoteNotFound) as refused:
        memory.update_note(person, 987654, 1, ["General"], "text")
    assert refused.value.kind == "not_found"
    assert "no note memory:987654" in refused.value.message
    assert "Search memory again" in refused.value.message
    with pytest.raises(NoteNotFound):
        memory.delete_note(person, "memory:987654", 1)


def test_another_persons_note_looks_exactly_like_a_missing_one(memory, people):
    ann, bob = people
    (note,) = memory.create_notes(ann, [item("Ann's secret plan")])
    with pytest.raises(NoteNotFound) as on_update:
        memory.update_note(bob, note.id, 1, ["General"], "taken over")
    with pytest.raises(NoteNotFound) as on_delete:
        memory.delete_note(bob, note.id, 1)
    missing_id = note.id + 1000
    with pytest.raises(NoteNotFound) as on_missing:
        memory.update_note(bob, missing_id, 1, ["General"], "taken over")
    assert on_update.value.message == on_delete.value.message
    assert on_update.value.message == on_missing.value.message.replace(
        str(missing_id), str(note.id)
    )
    assert memory.search(bob, note.key).total == 0
    assert memory.search(bob, "secret plan").total == 0
    assert memory.notes(ann) == [note]


@pytest.mark.parametrize("bad_id", [0, -1, "abc", "memory:", None, True, 1.5])
def test_bad_id_is_invalid_and_shows_the_expected_form(memory, person, bad_id):
    with pytest.raises(InvalidNote, match='id must be a note id such as 12 or "memory:12"'):
        memory.update_note(person, bad_id, 1, ["General"], "text")
    with pytest.raises(InvalidNote, match="id must be a note id"):
        memory.delete_note(person, bad_id, 1)


@pytest.mark.parametrize("bad_version", [0, -2, "x", None, True, 1.0, "1.5"])
def test_bad_version_is_invalid(memory, person, bad_version):
    (note,) = memory.create_notes(person, [item("Likes tea")])
    with pytest.raises(InvalidNote, match="version must be the note's current version"):
        memory.update_note(person, note.id, bad_version, ["General"], "text")
    with pytest.raises(InvalidNote, match="version must be"):
        memory.delete_note(person, note.id, bad_version)
    assert memory.notes(person) == [note]


@pytest.mark.parametrize(
    ("notes", "message"),
    [
        ("Likes tea", "notes must be a list of"),
        ({"categories": ["A"], "content": "x"}, "notes must be a list of"),
        (["Likes tea"], "must be an object"),
        ([item("ok"), "Likes tea"], "Note 2 of 2 must be an object"),
        ([{"content": "no categories"}], "categories must be a list"),
        ([{"categories": ["A"]}], "content must be the note's text"),
    ],
)
def test_malformed_create_is_invalid_with_the_expected_shape(memory, person, notes, message):
    with pytest.raises(InvalidNote, match=message):
        memory.create_notes(person, notes)
    assert memory.notes(person) == []


def test_nul_and_other_unprintable_characters_never_reach_the_store(memory, person):
    with pytest.raises(InvalidNote, match="U\\+0000"):
        memory.create_notes(person, [item("Likes\x00tea")])
    with pytest.raises(InvalidNote, match="U\\+0000"):
        memory.create_notes(person, [item("Likes tea", "Food\x00")])
    (note,) = memory.create_notes(person, [item("Likes tea")])
    with pytest.raises(InvalidNote, match="U\\+D800"):
        memory.update_note(person, note.id, 1, ["General"], "Likes \ud800 tea")
    assert memory.notes(person) == [note]


def test_unknown_source_is_refused(memory, person):
    with pytest.raises(ValueError, match="source must be one of agent, person, merge, admin"):
        memory.create_notes(person, [item("Likes tea")], source="robot")
    with pytest.raises(ValueError, match="source must be one of"):
        memory.update_note(person, 1, 1, ["General"], "Likes tea", source="")


# --- the person: instance or primary key ----------------------------------------------------------


@pytest.mark.django_db
def test_user_is_an_instance_or_its_primary_key_everywhere(make_user):
    memory = LongTermMemory()
    ann = make_user()
    (note,) = memory.create_notes(ann, [item("Likes tea")])
    assert [n.id for n in memory.notes(ann.pk)] == [note.id]
    assert memory.notes(ann) == memory.notes(ann.pk)
    updated = memory.update_note(ann.pk, note.id, 1, ["General"], "Likes green tea")
    assert memory.search(ann, "green").notes == [updated]
    memory.delete_note(ann, note.id, 2)
    memory.create_notes(ann.pk, [item("Lives in Riga")])
    assert memory.clear(ann) == 1
    assert MemoryNote.objects.filter(user=ann).count() == 0


@pytest.mark.django_db
def test_unsaved_or_missing_user_is_invalid(make_user):
    memory = LongTermMemory()
    # Unsaved, whether its key is empty or made up as it was built (a UUID key's default).
    unsaved = get_user_model()(username="nobody")
    with pytest.raises(InvalidNote, match="not saved"):
        memory.notes(unsaved)
    with pytest.raises(InvalidNote, match="not saved"):
        memory.create_notes(unsaved, [item("x")])
    # Built with the key of a stored person: that person.
    ann = make_user()
    memory.create_notes(ann, [item("Lives in Riga")])
    assert [note.content for note in memory.notes(get_user_model()(pk=ann.pk))] == ["Lives in Riga"]
    with pytest.raises(InvalidNote, match="No person given"):
        memory.create_notes(None, [item("x")])
    with pytest.raises(InvalidNote, match="not signed in"):
        memory.notes(AnonymousUser())


# --- stores and the optimizer switch ----------------------------------------------------------


class DuckStore:
    """The five note methods, without subclassing ``BaseStore``."""

    def list_notes(self, user_id):
        return []

    def insert_notes(self, user_id, notes):
        return []

    def update_note(self, user_id, note_id, version, note):
        raise NotImplementedError

    def delete_note(self, user_id, note_id, version):
        return None

    def clear_notes(self, user_id):
        return 0


def test_default_store_is_the_django_store():
    memory = LongTermMemory()
    assert isinstance(memory.store, DjangoStore)
    assert memory.tool_name == "manage_memory"
    assert memory.service_blocks == ("agent_memory",)


@pytest.mark.parametrize("store", [DuckStore(), object(), "agent_memory.stores.orm.DjangoStore"])
def test_a_store_that_is_not_a_base_store_is_refused_saying_to_subclass_it(store):
    with pytest.raises(MemoryStorageNotSupportedError) as refused:
        LongTermMemory(store=store)
    message = str(refused.value)
    assert f"{type(store).__name__} is not a memory store" in message
    assert "subclass agent_memory.stores.base.BaseStore" in message
    for name in ("list_notes", "insert_notes", "update_note", "delete_note", "clear_notes"):
        assert name in message


def test_optimizer_unset_is_silently_off_on_a_store_without_merges():
    memory = LongTermMemory(store=NoteMethodsOnly())
    assert memory.optimizer_options is None
    assert not memory.can_merge


def test_optimizer_false_is_off():
    assert LongTermMemory(store=NoteMethodsOnly(), optimizer=False).optimizer_options is None
    assert LongTermMemory(store=InMemoryStore(), optimizer=False).optimizer_options is None


@pytest.mark.parametrize("optimizer", [{"interval_hours": 12}, {}, True])
def test_optimizer_asked_for_on_a_store_without_merges_is_refused(optimizer):
    with pytest.raises(MemoryStorageNotSupportedError) as refused:
        LongTermMemory(store=NoteMethodsOnly(), optimizer=optimizer)
    assert refused.value.missing == ("_merge_notes", "_unmerge_notes")
    assert "optimizer" in str(refused.value)


def test_optimizer_unset_is_on_when_the_store_supports_merges():
    memory = LongTermMemory(store=InMemoryStore())
    assert memory.can_merge
    assert memory.optimizer_options == {
        "interval_hours": 24,
        "lease_minutes": 10,
        "sweep_minutes": 15,
        "max_call_chars": 12_000,
    }


def test_optimizer_options_override_the_settings():
    memory = LongTermMemory(store=InMemoryStore(), optimizer={"interval_hours": 12})
    assert memory.optimizer_options is not None
    assert memory.optimizer_options["interval_hours"] == 12
    assert memory.optimizer_options["lease_minutes"] == 10


def test_optimizer_of_the_wrong_type_is_a_type_error():
    with pytest.raises(TypeError, match="optimizer must be"):
        LongTermMemory(store=InMemoryStore(), optimizer="yes")


def test_store_without_checked_writes_still_works_through_the_front_door():
    memory = LongTermMemory(store=NoteMethodsOnly())
    (note,) = memory.create_notes(7, [item("Likes tea")])
    assert memory.update_note(7, note.id, 1, ["General"], "Likes green tea").version == 2
    with pytest.raises(NoteNotFound):
        memory.update_note(8, note.id, 2, ["General"], "taken over")
    with pytest.raises(StaleVersion):
        memory.update_note(7, note.id, 1, ["General"], "old")
