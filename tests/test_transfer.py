"""Export and import of a person's memory: round trip, duplicates, all or nothing."""

from __future__ import annotations

import json

import pytest
from django.test import override_settings

from agent_memory import LongTermMemory
from agent_memory.errors import InvalidNote, LimitReached, StaleVersion
from agent_memory.notes import NewNote
from agent_memory.stores.in_memory import InMemoryStore
from agent_memory.transfer import EXPORT_VERSION, parse_text


def saved(memory, person):
    return sorted((note.categories, note.content, note.source) for note in memory.notes(person))


def texts(memory, person):
    return sorted((note.categories, note.content) for note in memory.notes(person))


def fill(memory, person):
    memory.create_notes(person, [{"categories": ["Food"], "content": "Likes tea."}])
    memory.create_notes(
        person,
        [{"categories": ["Work", "Tools"], "content": "Uses Django.\nAnd PostgreSQL 16."}],
        source="person",
    )
    memory.create_notes(person, [{"categories": ["Имя"], "content": "Зовут Саша."}])


def test_export_then_erase_then_import_gives_back_the_same_notes(memory, person):
    fill(memory, person)
    before = texts(memory, person)
    created = {note.content: note.created_at for note in memory.notes(person)}
    order = [note.content for note in memory.notes(person)]
    document = json.loads(json.dumps(memory.export(person)))
    assert document["version"] == EXPORT_VERSION
    assert document["format"] == "agent_memory"
    assert {"categories", "content", "source", "created_at", "updated_at"} <= set(
        document["notes"][0]
    )

    memory.clear(person)
    result = memory.import_notes(person, document)

    assert len(result.created) == 3 and result.skipped == []
    assert texts(memory, person) == before
    # Whatever the file says about who wrote them, an import is an import; the dates stay.
    notes = memory.notes(person)
    assert {(note.source, note.created_by) for note in notes} == {("import", "import")}
    assert {note.content: note.created_at for note in notes} == created
    assert [note.content for note in memory.notes(person)] == order


def test_import_skips_and_lists_notes_already_saved_or_repeated(memory, person):
    fill(memory, person)
    result = memory.import_notes(
        person,
        [
            {"categories": ["food"], "content": "likes   TEA."},
            {"categories": ["Music"], "content": "Plays the cello."},
            {"categories": ["Music"], "content": "Plays the cello."},
        ],
    )
    assert [note.content for note in result.created] == ["Plays the cello."]
    assert [item["content"] for item in result.skipped] == ["likes   TEA.", "Plays the cello."]
    assert "Food" in result.skipped[0]["reason"]
    assert result.as_dict()["created"] == 1
    assert len(memory.notes(person)) == 4


def test_an_invalid_note_fails_the_whole_import_naming_it(memory, person):
    fill(memory, person)
    before = saved(memory, person)
    with pytest.raises(InvalidNote) as caught:
        memory.import_notes(
            person,
            [
                {"categories": ["Music"], "content": "Plays the cello."},
                {"categories": ["Keys"], "content": "password: hunter22"},
            ],
        )
    assert caught.value.message.startswith("Note 2 of 2:")
    assert caught.value.code == "secret" and caught.value.params["note_number"] == 2
    assert saved(memory, person) == before


@override_settings(AGENT_MEMORY={"MAX_NOTES": 4})
def test_an_import_past_the_note_limit_writes_nothing(memory, person):
    fill(memory, person)
    with pytest.raises(LimitReached):
        memory.import_notes(person, "First new note.\nSecond new note.")
    assert len(memory.notes(person)) == 3
    # Duplicates do not count against the limit: they are skipped.
    result = memory.import_notes(person, "Likes tea.\nOne new note.", categories=["Food"])
    assert len(result.created) == 1 and len(result.skipped) == 1


def test_plain_text_is_one_note_per_line_with_the_given_categories(memory, person):
    result = memory.import_notes(
        person,
        parse_text("- Likes tea.\n\n  * Walks the dog at 7.\n1. Reads sci-fi.\n"),
        categories=["Me"],
    )
    assert sorted(note.content for note in result.created) == [
        "Likes tea.",
        "Reads sci-fi.",
        "Walks the dog at 7.",
    ]
    assert {note.categories for note in result.created} == {("Me",)}
    assert {note.source for note in result.created} == {"import"}


@pytest.mark.parametrize(
    ("data", "code"),
    [
        ({"format": "agent_memory", "version": 99, "notes": []}, "import_version"),
        ({"format": "something else", "notes": []}, "import_shape"),
        ({"format": "agent_memory", "version": 1, "notes": []}, "import_empty"),
        ("   \n  ", "import_empty"),
        (42, "import_shape"),
        ([1, 2], "import_shape"),
    ],
)
def test_a_file_that_is_no_import_is_refused_with_what_to_do(memory, person, data, code):
    with pytest.raises(InvalidNote) as caught:
        memory.import_notes(person, data)
    assert caught.value.code == code
    assert memory.notes(person) == []


def test_unreadable_json_says_which_files_work():
    with pytest.raises(InvalidNote, match="Download my memory"):
        parse_text('{"notes": [')


def test_a_note_saved_while_an_import_waits_for_the_lock_is_skipped_not_doubled(person):
    class SavedMeanwhile(InMemoryStore):
        """Another writer saves "Likes tea." just before the import takes the lock."""

        def insert_notes_checked(self, user_id, notes, check):
            if not self.list_notes(user_id):
                self.insert_notes(user_id, [NewNote(("Food",), "Likes tea.", source="person")])
            return super().insert_notes_checked(user_id, notes, check)

    memory = LongTermMemory(store=SavedMeanwhile(), optimizer=False)
    result = memory.import_notes(
        person,
        [
            {"categories": ["Food"], "content": "Likes tea."},
            {"categories": ["Home"], "content": "Lives in Riga."},
        ],
    )
    assert [note.content for note in result.created] == ["Lives in Riga."]
    assert [item["content"] for item in result.skipped] == ["Likes tea."]
    assert sorted(note.content for note in memory.notes(person)) == ["Likes tea.", "Lives in Riga."]


def test_an_import_that_never_finds_the_notes_still_is_busy_and_writes_nothing(person):
    class AlwaysChanging(InMemoryStore):
        """Another writer saves one more imported text before every attempt takes the lock."""

        def insert_notes_checked(self, user_id, notes, check):
            saved = {note.content for note in self.list_notes(user_id)}
            fresh = next(note for note in notes if note.content not in saved)
            self.insert_notes(user_id, [NewNote(("Food",), fresh.content, source="person")])
            return super().insert_notes_checked(user_id, notes, check)

    memory = LongTermMemory(store=AlwaysChanging(), optimizer=False)
    lines = "\n".join(f"Likes tea number {number}." for number in range(1, 9))
    with pytest.raises(StaleVersion, match="kept changing during the import") as busy:
        memory.import_notes(person, lines, categories=["Food"])
    assert busy.value.code == "import_busy"
    assert all(note.source == "person" for note in memory.notes(person))


def test_an_import_scans_each_distinct_text_and_list_of_categories_for_secrets_once(
    memory, person, monkeypatch
):
    from agent_memory.rules import fields

    scanned = []
    find_secret = fields.find_secret
    monkeypatch.setattr(
        fields, "find_secret", lambda text: scanned.append(text) or find_secret(text)
    )
    lines = [f"Likes tea number {number}." for number in range(1, 51)]

    result = memory.import_notes(person, "\n".join(lines * 40), categories=["Food", "Home"])

    assert len(result.created) == 50 and len(result.skipped) == 50 * 39
    assert sorted(scanned) == sorted([*lines, "Food", "Home"])


def test_a_secret_in_a_repeat_that_differs_only_in_case_still_fails_the_whole_import(
    memory, person
):
    # The same note once case is folded, but only the upper-case copy is an access key.
    lines = "Build id akiaz3mhqk7vx2lw9p4e here.\n" * 30
    lines += "Build id AKIAZ3MHQK7VX2LW9P4E here.\n" + "Build id akiaz3mhqk7vx2lw9p4e here.\n" * 30

    with pytest.raises(InvalidNote) as caught:
        memory.import_notes(person, lines, categories=["Work"])

    assert caught.value.code == "secret" and caught.value.params["note_number"] == 31
    assert memory.notes(person) == []


def test_a_repeated_note_with_a_secret_fails_the_import_at_its_first_copy(memory, person):
    lines = "Plays the cello.\n" + "password: hunter22\n" * 100

    with pytest.raises(InvalidNote) as caught:
        memory.import_notes(person, lines, categories=["Music"])

    assert caught.value.params["note_number"] == 2
    assert memory.notes(person) == []
