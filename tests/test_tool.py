"""The manage_memory tool: the four actions, their errors, and the tool lists."""

from __future__ import annotations

import json
import logging
from datetime import timedelta

import pytest
from django.utils import timezone

from agent_memory import LongTermMemory, labels
from agent_memory.errors import InvalidNote, ToolNameConflictError
from agent_memory.names import TOOL_NAME
from agent_memory.stores.in_memory import InMemoryStore
from agent_memory.stores.orm import DjangoStore
from agent_memory.tool import ToolCall, parse_call, tool_definition


@pytest.fixture(params=["django"])  # the store contract suites cover the in-memory store
def memory(request, db):
    store = InMemoryStore() if request.param == "in_memory" else DjangoStore()
    return LongTermMemory(store=store, optimizer=False)


def create(memory, user, *notes):
    answer = memory.call_tool(
        user,
        {"action": "create", "notes": [{"categories": c, "content": t} for c, t in notes]},
    )
    assert "error" not in answer, answer
    return answer["notes"]


def error(answer, kind):
    assert set(answer) == {"error"}, answer
    assert answer["error"]["kind"] == kind, answer
    return answer["error"]["message"]


# --- the four actions ----------------------------------------------------------------------


def test_create_answers_the_new_notes(memory, user):
    answer = memory.call_tool(
        user,
        {
            "action": "create",
            "notes": [
                {"categories": ["Preferences", "Language"], "content": " Address me informally. "},
                {"categories": ["Work"], "content": "Deploys on PostgreSQL."},
            ],
        },
    )
    first, second = answer["notes"]
    assert set(first) == {
        *("id", "version", "categories", "content", "updated_at"),
        *("source", "created_by", "valid_until", "pinned"),
    }
    assert first["categories"] == ["Preferences", "Language"]
    assert first["content"] == "Address me informally."
    assert first["version"] == 1 and second["version"] == 1
    assert [note.content for note in memory.notes(user)] == [
        "Deploys on PostgreSQL.",
        "Address me informally.",
    ]
    assert {note.source for note in memory.notes(user)} == {"agent"}


def test_arguments_may_be_json_text(memory, user):
    answer = memory.call_tool(
        user, '{"action": "create", "notes": [{"categories": ["A"], "content": "Text."}]}'
    )
    assert answer["notes"][0]["content"] == "Text."
    assert memory.call_tool(user, b'{"action": "search", "query": "text"}')["total"] == 1


@pytest.mark.parametrize("as_key", [True, False])
def test_update_takes_the_id_as_a_number_or_as_the_key(memory, user, as_key):
    (note,) = create(memory, user, (["A"], "Old text."))
    answer = memory.call_tool(
        user,
        {
            "action": "update",
            "id": f"memory:{note['id']}" if as_key else note["id"],
            "version": 1,
            "categories": ["A", "B"],
            "content": "New text.",
        },
    )
    assert answer["note"]["id"] == note["id"]
    assert answer["note"]["version"] == 2
    assert answer["note"]["categories"] == ["A", "B"]
    assert answer["note"]["content"] == "New text."


@pytest.mark.parametrize("as_key", [True, False])
def test_delete_answers_the_deleted_id(memory, user, as_key):
    (note,) = create(memory, user, (["A"], "Text."))
    answer = memory.call_tool(
        user,
        {"action": "delete", "id": f"memory:{note['id']}" if as_key else note["id"], "version": 1},
    )
    assert answer == {"deleted": note["id"]}
    assert memory.notes(user) == []


def test_search_answers_notes_and_total(memory, user, settings):
    settings.AGENT_MEMORY = {"SEARCH_LIMIT": 2}
    create(
        memory,
        user,
        (["Food"], "Drinks coffee black."),
        (["Food"], "Likes coffee in the morning."),
        (["Food"], "Coffee after lunch is too late."),
        (["Work"], "Writes Go."),
    )
    answer = memory.call_tool(user, {"action": "search", "query": "coffee"})
    assert answer["total"] == 3
    assert len(answer["notes"]) == 2


def test_search_by_key_finds_that_note(memory, user):
    _, second = create(memory, user, (["A"], "One."), (["B"], "Two."))
    answer = memory.call_tool(user, {"action": "search", "query": f"memory:{second['id']}"})
    assert answer == {"notes": [second], "total": 1}


def test_fields_the_action_does_not_use_are_ignored(memory, user):
    answer = memory.call_tool(user, {"action": "search", "query": "x", "id": [], "notes": 5})
    assert answer == {"notes": [], "total": 0}


# --- errors guide the next step ------------------------------------------------------------


def test_a_create_batch_is_all_or_nothing(memory, user):
    answer = memory.call_tool(
        user,
        {
            "action": "create",
            "notes": [
                {"categories": ["A"], "content": "Fine."},
                {"categories": ["A/B"], "content": "Bad category."},
            ],
        },
    )
    message = error(answer, "invalid")
    assert message.startswith("Note 2 of 2:")
    assert memory.notes(user) == []


def test_duplicate_names_the_note_that_holds_the_text(memory, user):
    (note,) = create(memory, user, (["Preferences"], "Address me informally."))
    answer = memory.call_tool(
        user,
        {
            "action": "create",
            "notes": [{"categories": ["preferences"], "content": "address me   INFORMALLY."}],
        },
    )
    message = error(answer, "duplicate")
    assert f"memory:{note['id']}" in message
    assert "Update" in message
    assert len(memory.notes(user)) == 1


def test_stale_version_says_to_search_again(memory, user):
    (note,) = create(memory, user, (["A"], "Text."))
    memory.update_note(user, note["id"], 1, ["A"], "Changed by the person.", source="person")
    answer = memory.call_tool(
        user,
        {"action": "update", "id": note["id"], "version": 1, "categories": ["A"], "content": "X."},
    )
    message = error(answer, "stale_version")
    assert "Search for it again" in message
    assert memory.notes(user)[0].content == "Changed by the person."
    message = error(
        memory.call_tool(user, {"action": "delete", "id": note["id"], "version": 1}),
        "stale_version",
    )
    assert "version 2" in message


def test_not_found_says_to_search_again(memory, user, other_user):
    (theirs,) = create(memory, other_user, (["A"], "Someone else's note."))
    for arguments in (
        {"action": "delete", "id": theirs["id"], "version": 1},
        {"action": "update", "id": 999_999, "version": 1, "categories": ["A"], "content": "X."},
    ):
        message = error(memory.call_tool(user, arguments), "not_found")
        assert "Search memory again" in message
    assert len(memory.notes(other_user)) == 1


def test_limit_reached_gives_the_figures(memory, user, settings):
    settings.AGENT_MEMORY = {"MAX_NOTES": 2}
    create(memory, user, (["A"], "One."), (["A"], "Two."))
    answer = memory.call_tool(
        user, {"action": "create", "notes": [{"categories": ["A"], "content": "Three."}]}
    )
    message = error(answer, "limit_reached")
    assert "2 of 2 notes" in message
    assert "Delete or merge" in message


def test_batch_size_comes_from_the_live_settings(memory, user, settings):
    settings.AGENT_MEMORY = {"MAX_BATCH": 2}
    notes = [{"categories": ["A"], "content": f"Note {n}."} for n in range(3)]
    message = error(memory.call_tool(user, {"action": "create", "notes": notes}), "invalid")
    assert "at most 2 notes" in message
    assert memory.notes(user) == []


def test_secrets_are_refused(memory, user):
    answer = memory.call_tool(
        user,
        {"action": "create", "notes": [{"categories": ["Work"], "content": "password: hunter22"}]},
    )
    assert "not a place for passwords" in error(answer, "invalid")
    assert memory.notes(user) == []


# --- malformed calls: invalid, with the expected shape --------------------------------------


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ("{not json", "not valid JSON"),
        ("", "not valid JSON"),
        (None, '"action"'),
        ([1, 2], '"action"'),
        (42, '"action"'),
        ("[]", '"action"'),
        (b"\xff\xfe", "not UTF-8"),
        ({}, 'action must be one of "create", "update", "delete", "search"'),
        ({"action": "remember"}, 'action must be one of "create", "update", "delete", "search"'),
        ({"action": ["create"]}, "action must be one of"),
        ({"action": "create"}, 'create needs notes; missing: notes. For example: {"action": '),
        ({"action": "create", "notes": "Likes tea"}, "notes must be a list of 1 to 5"),
        ({"action": "create", "notes": []}, "notes must hold 1 to 5 notes"),
        ({"action": "create", "notes": ["Likes tea"]}, 'must be an object {"categories"'),
        ({"action": "create", "notes": [{"content": "x"}]}, "categories must be a list"),
        (
            {"action": "create", "notes": [{"categories": "Food", "content": "x"}]},
            "not a single string",
        ),
        ({"action": "create", "notes": [{"categories": ["A"], "content": 5}]}, "content must be"),
        (
            {"action": "create", "notes": [{"categories": ["A"], "content": "x" * 501}]},
            "the limit is 500",
        ),
        ({"action": "update", "id": 1}, "missing: version, categories, content"),
        (
            {"action": "update", "id": "twelve", "version": 1, "categories": ["A"], "content": "x"},
            'id must be a note id such as 12 or "memory:12"',
        ),
        (
            {"action": "update", "id": 1, "version": 0, "categories": ["A"], "content": "x"},
            "version must be the note's current version",
        ),
        ({"action": "delete", "id": True, "version": 1}, "id must be a note id"),
        ({"action": "delete", "id": 1, "version": 1.5}, "version must be"),
        ({"action": "search"}, "search needs query"),
        ({"action": "search", "query": 7}, "query must be non-empty text"),
        ({"action": "search", "query": "   "}, "query must be non-empty text"),
        ({"action": "search", "query": "word " * 200}, "search with a few words"),
    ],
)
def test_malformed_calls_are_invalid_and_show_the_expected_shape(memory, user, arguments, expected):
    message = error(memory.call_tool(user, arguments), "invalid")
    assert expected in message
    assert memory.notes(user) == []


def test_an_unexpected_failure_is_logged_and_answered(user, caplog):
    class BrokenStore(InMemoryStore):
        def list_notes(self, user_id):
            raise RuntimeError("disk on fire")

    memory = LongTermMemory(store=BrokenStore(), optimizer=False)
    with caplog.at_level(logging.ERROR, logger="agent_memory"):
        answer = memory.call_tool(user, {"action": "search", "query": "tea"})
    assert "internal error" in error(answer, "invalid")
    assert "disk on fire" not in json.dumps(answer)
    assert "disk on fire" in caplog.text


def test_a_missing_person_is_invalid_not_a_crash():
    memory = LongTermMemory(store=InMemoryStore(), optimizer=False)
    assert "No person given" in error(
        memory.call_tool(None, {"action": "search", "query": "x"}), "invalid"
    )


# --- the tool lists -------------------------------------------------------------------------

APP_TOOLS = {
    "openai": {"type": "function", "function": {"name": "get_weather", "parameters": {}}},
    "anthropic": {"name": "get_weather", "input_schema": {"type": "object"}},
    "json": {"title": "get_weather", "type": "object"},
}
CLASHES = {
    "openai": {"type": "function", "function": {"name": "manage_memory", "parameters": {}}},
    "anthropic": {"name": "manage_memory", "input_schema": {"type": "object"}},
    "json": {"title": "manage_memory", "type": "object"},
}


@pytest.mark.parametrize("format", ["openai", "anthropic", "json"])
def test_tools_add_the_memory_tool_after_the_app_tools(format):
    memory = LongTermMemory(store=InMemoryStore(), optimizer=False)
    tools = memory.tools([APP_TOOLS[format]], format)
    assert tools == [APP_TOOLS[format], tool_definition(format)]
    assert memory.tools(format=format) == [memory.tool_definition(format)]


@pytest.mark.parametrize("format", ["openai", "anthropic", "json"])
def test_an_app_tool_named_manage_memory_is_a_conflict(format):
    memory = LongTermMemory(store=InMemoryStore(), optimizer=False)
    with pytest.raises(ToolNameConflictError, match="manage_memory"):
        memory.tools([APP_TOOLS[format], CLASHES[format]], format)


def test_tool_name():
    assert LongTermMemory(store=InMemoryStore(), optimizer=False).tool_name == "manage_memory"


def test_the_tool_is_named_the_same_everywhere():
    memory = LongTermMemory(store=InMemoryStore(), optimizer=False)
    names = {
        memory.tool_name,
        memory.tool_definition("openai")["function"]["name"],
        memory.tool_definition("anthropic")["name"],
        memory.tool_definition("json")["title"],
        labels.MEMORY_TOOL_NAME,
    }
    assert names == {TOOL_NAME}
    assert f"with the {TOOL_NAME} tool" in memory.instructions


def test_unknown_format_is_a_programming_error():
    with pytest.raises(ValueError, match="openai, anthropic, json"):
        tool_definition("gemini")


# --- reading the arguments ------------------------------------------------------------------


def test_parse_call_reads_json_text_into_the_fields_of_its_action():
    call = parse_call(
        '{"action": "update", "id": "memory:3", "version": 2, "categories": ["Food"], '
        '"content": "Likes tea.", "query": "ignored"}'
    )
    assert call == ToolCall(
        action="update", id="memory:3", version=2, categories=["Food"], content="Likes tea."
    )
    assert not call.sets_valid_until


def test_parse_call_tells_a_valid_until_left_out_from_one_sent_as_null():
    fields = {"action": "update", "id": 3, "version": 2, "categories": ["A"], "content": "x"}
    assert not parse_call(fields).sets_valid_until
    cleared = parse_call({**fields, "valid_until": None})
    assert (cleared.sets_valid_until, cleared.valid_until) == (True, None)


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ("[1, 2]", 'must be a JSON object with an "action"'),
        ({"action": "forget"}, 'action must be one of "create", "update", "delete", "search"'),
        ({"action": "delete", "id": 3}, "delete needs id, version; missing: version"),
        ({"action": "create", "notes": "tea"}, "notes must be a list of 1 to 5 objects"),
        ({"action": "search", "query": "x", "pinned": True}, "pinned cannot be sent"),
        (
            {
                "action": "create",
                "notes": [
                    {"categories": ["Food"], "content": "Likes tea."},
                    {"categories": ["Style"], "content": "Be brief.", "pinned": True},
                ],
            },
            "pinned cannot be sent",
        ),
    ],
)
def test_parse_call_refuses_a_malformed_call_showing_the_shape_expected(arguments, expected):
    with pytest.raises(InvalidNote) as refused:
        parse_call(arguments)
    assert refused.value.kind == "invalid"
    assert expected in refused.value.message
    assert "For example" in refused.value.message or "e.g." in refused.value.message


def test_update_with_valid_until_null_removes_the_end_and_without_it_keeps_it(memory, user):
    (note,) = create(memory, user, (["Plans"], "In Paris this week."))
    fields = {"action": "update", "id": note["id"], "categories": ["Plans"]}
    end = (timezone.now() + timedelta(days=30)).date().isoformat()
    dated = memory.call_tool(
        user, {**fields, "version": 1, "content": "In Paris.", "valid_until": end}
    )["note"]
    kept = memory.call_tool(user, {**fields, "version": 2, "content": "In Paris, Lyon."})["note"]
    assert kept["valid_until"] == dated["valid_until"] is not None
    cleared = memory.call_tool(
        user, {**fields, "version": 3, "content": "Lives in Paris.", "valid_until": None}
    )["note"]
    assert cleared["valid_until"] is None
