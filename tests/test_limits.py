"""Limits and duplicates through ``LongTermMemory``, on every kind of store.

``django`` is the ORM store (SQLite or PostgreSQL, by ``DATABASE_URL``), ``in_memory`` the
in-memory store, and ``note_methods`` a store that writes only the five note methods, whose
checked writes are the defaults of ``BaseStore`` (the person's lock in this process).
"""

from __future__ import annotations

from typing import Any

import pytest
from django.test import override_settings

from agent_memory import LongTermMemory
from agent_memory.errors import DuplicateNote, InvalidNote, LimitReached
from agent_memory.stores.base import BaseStore
from agent_memory.stores.in_memory import InMemoryStore
from agent_memory.stores.orm import DjangoStore
from tests.scripted_store import NoteOnlyStore


class NoteMethodsOnly(NoteOnlyStore):
    """A store that writes the five note methods and nothing else, in this process."""

    def __init__(self) -> None:
        super().__init__(InMemoryStore())


@pytest.fixture(
    params=[pytest.param("django", marks=pytest.mark.django_db), "in_memory", "note_methods"]
)
def memory(request):
    if request.param == "django":
        return LongTermMemory(store=DjangoStore())
    if request.param == "in_memory":
        return LongTermMemory(store=InMemoryStore())
    store = NoteMethodsOnly()
    # The base's checked writes: the person's lock in this process.
    assert type(store).insert_notes_checked is BaseStore.insert_notes_checked
    return LongTermMemory(store=store)


def item(content: str, *categories: str) -> dict[str, Any]:
    return {"categories": list(categories or ["General"]), "content": content}


def contents(memory: LongTermMemory, user: Any) -> list[str]:
    return sorted(note.content for note in memory.notes(user))


# --- MAX_NOTES ------------------------------------------------------------------------------


@override_settings(AGENT_MEMORY={"MAX_NOTES": 3})
def test_max_notes_can_be_reached_then_the_next_create_is_refused_with_figures(memory, person):
    memory.create_notes(person, [item("one"), item("two")])
    memory.create_notes(person, [item("three")])
    with pytest.raises(LimitReached) as refused:
        memory.create_notes(person, [item("four")])
    assert refused.value.kind == "limit_reached"
    assert "3 of 3 notes are saved and this adds 1" in refused.value.message
    assert "Delete or merge outdated notes" in refused.value.message
    assert contents(memory, person) == ["one", "three", "two"]


@override_settings(AGENT_MEMORY={"MAX_NOTES": 3})
def test_batch_that_would_pass_max_notes_is_refused_whole(memory, person):
    memory.create_notes(person, [item("one"), item("two")])
    with pytest.raises(LimitReached, match="2 of 3 notes are saved and this adds 2"):
        memory.create_notes(person, [item("three"), item("four")])
    assert contents(memory, person) == ["one", "two"]


@override_settings(AGENT_MEMORY={"MAX_NOTES": 1})
def test_limits_are_per_person(memory, people):
    ann, bob = people
    memory.create_notes(ann, [item("Ann's note")])
    with pytest.raises(LimitReached):
        memory.create_notes(ann, [item("another")])
    memory.create_notes(bob, [item("Bob's note")])
    assert contents(memory, bob) == ["Bob's note"]


@override_settings(AGENT_MEMORY={"MAX_NOTES": 1})
def test_deleting_a_note_makes_room_again(memory, person):
    (note,) = memory.create_notes(person, [item("one")])
    memory.delete_note(person, note.id, note.version)
    memory.create_notes(person, [item("two")])
    assert contents(memory, person) == ["two"]


# --- MAX_TOTAL_CHARS --------------------------------------------------------------------------


@override_settings(AGENT_MEMORY={"MAX_TOTAL_CHARS": 20})
def test_max_total_chars_can_be_reached_exactly_then_one_more_is_refused(memory, person):
    memory.create_notes(person, [item("a" * 10), item("b" * 10)])
    with pytest.raises(LimitReached) as refused:
        memory.create_notes(person, [item("c")])
    assert "20 of 20 characters are used and this adds 1" in refused.value.message
    assert "Delete or merge outdated notes" in refused.value.message
    assert len(memory.notes(person)) == 2


@override_settings(AGENT_MEMORY={"MAX_TOTAL_CHARS": 20})
def test_characters_are_counted_after_stripping(memory, person):
    memory.create_notes(person, [item("   " + "a" * 20 + "   ")])
    assert [len(note.content) for note in memory.notes(person)] == [20]


@override_settings(AGENT_MEMORY={"MAX_TOTAL_CHARS": 20})
def test_batch_that_would_pass_max_total_chars_is_refused_whole(memory, person):
    memory.create_notes(person, [item("a" * 8)])
    with pytest.raises(LimitReached, match="8 of 20 characters are used and this adds 13"):
        memory.create_notes(person, [item("b" * 6), item("c" * 7)])
    assert contents(memory, person) == ["a" * 8]


@override_settings(AGENT_MEMORY={"MAX_TOTAL_CHARS": 20})
def test_update_that_grows_past_max_total_chars_is_refused_and_changes_nothing(memory, person):
    _, second = memory.create_notes(person, [item("a" * 10), item("b" * 8)])
    with pytest.raises(LimitReached) as refused:
        memory.update_note(person, second.id, second.version, ["General"], "b" * 11)
    assert "18 of 20 characters are used and this adds 3" in refused.value.message
    unchanged = {note.id: note for note in memory.notes(person)}[second.id]
    assert (unchanged.version, unchanged.content) == (1, "b" * 8)
    # Growing up to the limit exactly is fine.
    grown = memory.update_note(person, second.id, second.version, ["General"], "b" * 10)
    assert grown.version == 2


def test_shrinking_or_deleting_is_allowed_when_limits_were_lowered_below_usage(memory, person):
    notes = memory.create_notes(person, [item("a" * 10), item("b" * 10), item("c" * 10)])
    with override_settings(AGENT_MEMORY={"MAX_NOTES": 2, "MAX_TOTAL_CHARS": 15}):
        with pytest.raises(LimitReached):
            memory.create_notes(person, [item("d")])
        shorter = memory.update_note(person, notes[0].id, 1, ["General"], "a" * 5)
        same_size = memory.update_note(person, notes[1].id, 1, ["Other"], "B" * 10)
        memory.delete_note(person, notes[2].id, 1)
    assert (shorter.version, same_size.version) == (2, 2)
    assert contents(memory, person) == ["B" * 10, "a" * 5]


# --- MAX_BATCH --------------------------------------------------------------------------------


@override_settings(AGENT_MEMORY={"MAX_BATCH": 2})
def test_batch_larger_than_max_batch_is_refused_and_says_to_split_it(memory, person):
    with pytest.raises(InvalidNote) as refused:
        memory.create_notes(person, [item("one"), item("two"), item("three")])
    assert "at most 2 notes; got 3" in refused.value.message
    assert "Send the rest in another call" in refused.value.message
    assert memory.notes(person) == []
    assert len(memory.create_notes(person, [item("one"), item("two")])) == 2


def test_empty_batch_is_invalid(memory, person):
    with pytest.raises(InvalidNote, match="notes must hold 1 to 5 notes; it is empty"):
        memory.create_notes(person, [])


# --- all or nothing -------------------------------------------------------------------------


def test_batch_with_an_invalid_note_saves_nothing_and_names_the_note(memory, person):
    with pytest.raises(InvalidNote) as refused:
        memory.create_notes(person, [item("fine"), item("also fine"), item("   ")])
    assert refused.value.message.startswith("Note 3 of 3: content is empty")
    assert memory.notes(person) == []


def test_batch_with_a_duplicate_of_a_saved_note_saves_nothing(memory, person):
    (saved,) = memory.create_notes(person, [item("Likes tea", "Food")])
    with pytest.raises(DuplicateNote) as refused:
        memory.create_notes(person, [item("Lives in Riga", "Home"), item("LIKES  TEA", "food")])
    assert refused.value.existing_id == saved.id
    assert f"Update {saved.key} instead" in refused.value.message
    assert contents(memory, person) == ["Likes tea"]


def test_batch_repeating_a_note_within_itself_saves_nothing(memory, person):
    with pytest.raises(DuplicateNote, match="Notes 1 and 2 of this batch"):
        memory.create_notes(person, [item("Likes tea", "Food"), item(" likes tea ", "FOOD")])
    assert memory.notes(person) == []


# --- duplicates through the front door ---------------------------------------------------------


def test_same_text_under_a_shared_category_is_a_duplicate_case_and_space_folded(memory, person):
    (saved,) = memory.create_notes(person, [item("Prefers aisle seats", "Travel", "Flights")])
    with pytest.raises(DuplicateNote) as refused:
        memory.create_notes(person, [item("  prefers   AISLE seats ", "flights")])
    assert refused.value.kind == "duplicate"
    assert saved.key in refused.value.message
    assert len(memory.notes(person)) == 1


def test_same_text_under_other_categories_is_not_a_duplicate(memory, person):
    memory.create_notes(person, [item("Prefers aisle seats", "Travel")])
    memory.create_notes(person, [item("Prefers aisle seats", "Cinema")])
    assert len(memory.notes(person)) == 2


def test_another_persons_note_is_never_a_duplicate(memory, people):
    ann, bob = people
    memory.create_notes(ann, [item("Likes tea", "Food")])
    memory.create_notes(bob, [item("Likes tea", "Food")])
    assert contents(memory, bob) == ["Likes tea"]


def test_update_to_its_own_text_is_not_a_duplicate(memory, person):
    (saved,) = memory.create_notes(person, [item("Likes tea", "Food")])
    updated = memory.update_note(person, saved.id, 1, ["FOOD", "Mornings"], "likes  TEA")
    assert (updated.version, updated.content) == (2, "likes  TEA")


def test_update_to_the_text_of_another_note_in_a_shared_category_is_a_duplicate(memory, person):
    tea, coffee = memory.create_notes(
        person, [item("Likes tea", "Food"), item("Likes coffee", "Food")]
    )
    with pytest.raises(DuplicateNote, match=tea.key):
        memory.update_note(person, coffee.id, 1, ["food"], "likes tea")
    assert contents(memory, person) == ["Likes coffee", "Likes tea"]
