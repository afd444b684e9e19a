"""One category, one spelling: a category written like one the person already has (case and
spacing aside) takes the existing spelling, whichever way the note is written."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from agent_memory import LongTermMemory
from agent_memory.kinds import NoteSource
from agent_memory.models import MemoryNote
from agent_memory.notes import NewNote
from agent_memory.rules import same_spelling, spelled_like

pytestmark = pytest.mark.django_db


@pytest.fixture
def memory():
    return LongTermMemory()


@pytest.fixture
def tea(memory, user):
    (note,) = memory.create_notes(user, [{"categories": ["Preferences"], "content": "Likes tea."}])
    return note


def categories_of(note_id: int) -> list[str]:
    return list(MemoryNote.objects.get(pk=note_id).categories)


def test_the_rule_takes_the_known_spelling_case_and_spacing_aside():
    known = ["Preferences", "Work Tools"]
    assert same_spelling(["preferences", "work   TOOLS", "Travel"], known) == (
        "Preferences",
        "Work Tools",
        "Travel",
    )
    # Two names that become one spelling are one category.
    assert same_spelling(["work tools", "Work  Tools"], known) == ("Work Tools",)
    # The first known spelling wins (the most recent use, for notes read newest first).
    assert same_spelling(["food"], ["FOOD", "Food"]) == ("FOOD",)


def test_notes_of_one_batch_share_a_new_categorys_first_spelling():
    notes = [
        NewNote(categories=("Garden",), content="Grows tomatoes."),
        NewNote(categories=("garden", "preferences"), content="Waters at dawn."),
    ]
    first, second = spelled_like(notes, [])
    assert first is notes[0]
    assert second.categories == ("Garden", "preferences")


def test_the_tool_takes_the_persons_spelling(memory, user, tea):
    answer = memory.call_tool(
        user, {"action": "create", "notes": [{"categories": ["PREFERENCES"], "content": "Hi."}]}
    )
    (note,) = answer["notes"]
    assert note["categories"] == ["Preferences"]
    assert categories_of(note["id"]) == ["Preferences"]


def test_an_update_through_the_tool_takes_the_spelling_of_the_other_notes(memory, user, tea):
    (coffee,) = memory.create_notes(user, [{"categories": ["Drinks"], "content": "Likes coffee."}])
    answer = memory.call_tool(
        user,
        {
            "action": "update",
            "id": coffee.key,
            "version": coffee.version,
            "categories": [" preferences "],
            "content": "Likes coffee.",
        },
    )
    assert answer["note"]["categories"] == ["Preferences"]


def test_a_note_alone_in_its_category_may_change_its_case(memory, user, tea):
    note = memory.update_note(
        user, tea.id, tea.version, ["PREFERENCES"], tea.content, source=NoteSource.PERSON
    )
    assert note.categories == ("PREFERENCES",)


def test_the_api_takes_the_persons_spelling(api, memory, user, tea):
    created = api.post(
        "/api/chat/memory", {"categories": ["preferences"], "content": "Hi."}, format="json"
    )
    assert created.status_code == 201, created.content
    assert created.json()["note"]["categories"] == ["Preferences"]

    (work,) = memory.create_notes(user, [{"categories": ["Work"], "content": "Writes Go."}])
    changed = api.patch(
        f"/api/chat/memory/{work.id}",
        {"categories": ["Work", "PREFERENCES"], "content": "Writes Go.", "version": 1},
        format="json",
    )
    assert changed.status_code == 200, changed.content
    assert changed.json()["note"]["categories"] == ["Work", "Preferences"]


def test_the_screen_takes_the_persons_spelling(client, memory, user, tea):
    client.force_login(user)
    client.post("/memory/", {"categories": "preferences", "content": "Prefers short answers."})
    (added,) = [note for note in memory.notes(user) if note.id != tea.id]
    assert added.categories == ("Preferences",)

    (work,) = memory.create_notes(user, [{"categories": ["Work"], "content": "Writes Go."}])
    client.post(
        f"/memory/notes/{work.id}/edit",
        {"categories": "Work, preferences", "content": "Writes Go.", "version": "1"},
    )
    assert categories_of(work.id) == ["Work", "Preferences"]


def test_an_import_takes_the_persons_spelling(client, memory, user, tea):
    client.force_login(user)
    document = {
        "format": "agent_memory",
        "version": 1,
        "notes": [{"categories": ["preferences"], "content": "Prefers short answers."}],
    }
    upload = SimpleUploadedFile("memory.json", json.dumps(document).encode(), "application/json")
    client.post("/memory/import", {"file": upload})
    (imported,) = [note for note in memory.notes(user) if note.id != tea.id]
    assert imported.categories == ("Preferences",)
