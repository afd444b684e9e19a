"""The tool definitions are valid JSON Schema, and every answer has its documented shape."""

from __future__ import annotations

import json
import re
from datetime import datetime

import pytest
from jsonschema import Draft7Validator, Draft202012Validator, FormatChecker

from agent_memory import LongTermMemory
from agent_memory.stores.in_memory import InMemoryStore
from agent_memory.stores.orm import DjangoStore
from agent_memory.tool import (
    ANSWER_SCHEMA,
    ANSWER_SCHEMAS,
    ERROR_SCHEMA,
    EXAMPLES,
    NOTE_SCHEMA,
    input_schema,
    tool_definition,
)

FORMATS = ["openai", "anthropic", "json"]


def arguments_schema(format: str) -> dict:
    definition = tool_definition(format)
    if format == "openai":
        return definition["function"]["parameters"]
    if format == "anthropic":
        return definition["input_schema"]
    return definition


@pytest.mark.parametrize("format", FORMATS)
def test_each_format_is_valid_json_schema(format):
    schema = arguments_schema(format)
    Draft202012Validator.check_schema(schema)
    if format != "json":
        Draft7Validator.check_schema(schema)
    json.dumps(tool_definition(format))


def test_openai_function_tool_shape():
    definition = tool_definition("openai")
    assert set(definition) == {"type", "function"}
    assert definition["type"] == "function"
    assert set(definition["function"]) == {"name", "description", "parameters"}
    assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", definition["function"]["name"])


def test_anthropic_tool_shape():
    definition = tool_definition("anthropic")
    assert set(definition) == {"name", "description", "input_schema"}
    assert definition["name"] == "manage_memory"


def test_json_format_is_the_bare_schema_named_after_the_tool():
    definition = tool_definition("json")
    assert definition["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert definition["title"] == "manage_memory"
    assert {key: definition[key] for key in input_schema()} == input_schema()


@pytest.mark.parametrize("format", ["openai", "anthropic"])
def test_provider_schemas_are_one_object_without_top_level_combinators(format):
    schema = arguments_schema(format)
    assert schema["type"] == "object"
    assert not {"oneOf", "anyOf", "allOf", "not", "enum", "$schema"} & set(schema)
    assert schema["required"] == ["action"]


def test_the_schema_is_precise():
    schema = input_schema()
    properties = schema["properties"]
    assert properties["action"]["enum"] == ["create", "update", "delete", "search"]
    notes = properties["notes"]
    assert (notes["minItems"], notes["maxItems"]) == (1, 5)
    for categories in (notes["items"]["properties"]["categories"], properties["categories"]):
        assert (categories["minItems"], categories["maxItems"]) == (1, 3)
        assert categories["items"]["maxLength"] == 60
    for content in (notes["items"]["properties"]["content"], properties["content"]):
        assert (content["minLength"], content["maxLength"]) == (1, 500)
    assert properties["version"] == {**properties["version"], "type": "integer", "minimum": 1}
    assert schema["additionalProperties"] is False


def test_limits_come_from_the_live_settings(settings):
    settings.AGENT_MEMORY = {"MAX_BATCH": 3}
    assert arguments_schema("openai")["properties"]["notes"]["maxItems"] == 3
    assert "1 to 3 new notes" in tool_definition("anthropic")["description"]


@pytest.mark.parametrize("action", ["create", "update", "delete", "search"])
def test_the_documented_examples_match_the_schema(action):
    Draft202012Validator(input_schema()).validate(json.loads(EXAMPLES[action]))


@pytest.mark.parametrize(
    "arguments",
    [
        {},
        {"action": "remember"},
        {"action": "create", "notes": []},
        {"action": "create", "notes": [{"categories": ["A"], "content": "x"}] * 6},
        {"action": "create", "notes": [{"categories": ["A", "B", "C", "D"], "content": "x"}]},
        {"action": "create", "notes": [{"categories": ["A/B"], "content": "x"}]},
        {"action": "create", "notes": [{"categories": ["A"], "content": "x" * 501}]},
        {"action": "create", "notes": [{"categories": ["A"]}]},
        {"action": "update", "id": "12x", "version": 1},
        {"action": "update", "id": "memory:0", "version": 1},
        {"action": "delete", "id": 12, "version": 0},
        {"action": "delete", "id": 12, "version": "3"},
        {"action": "search", "query": ""},
        {"action": "search", "query": "tea", "extra": True},
    ],
)
def test_the_schema_rejects_wrong_shapes(arguments):
    assert list(Draft202012Validator(input_schema()).iter_errors(arguments))


@pytest.mark.parametrize("id", [12, "memory:12"])
def test_the_schema_takes_the_id_as_number_or_key(id):
    Draft202012Validator(input_schema()).validate({"action": "delete", "id": id, "version": 3})


# --- answers --------------------------------------------------------------------------------


def test_answer_schemas_are_valid_json_schema():
    for schema in (NOTE_SCHEMA, ERROR_SCHEMA, ANSWER_SCHEMA, *ANSWER_SCHEMAS.values()):
        Draft202012Validator.check_schema(schema)


def check_answer(answer, action):
    checker = FormatChecker()
    Draft202012Validator(ANSWER_SCHEMAS[action], format_checker=checker).validate(answer)
    Draft202012Validator(ANSWER_SCHEMA, format_checker=checker).validate(answer)
    for note in answer.get("notes", []) + ([answer["note"]] if "note" in answer else []):
        assert datetime.fromisoformat(note["updated_at"]).tzinfo is not None
    json.dumps(answer)


def check_error(answer, kind):
    Draft202012Validator(ERROR_SCHEMA).validate(answer)
    Draft202012Validator(ANSWER_SCHEMA).validate(answer)
    assert answer["error"]["kind"] == kind
    for schema in ANSWER_SCHEMAS.values():
        assert not Draft202012Validator(schema).is_valid(answer)


@pytest.fixture(params=["django"])  # the store contract suites cover the in-memory store
def memory(request, db):
    store = InMemoryStore() if request.param == "in_memory" else DjangoStore()
    return LongTermMemory(store=store, optimizer=False)


def test_every_answer_has_its_documented_shape(memory, user, settings):
    call = memory.call_tool
    created = call(
        user,
        {
            "action": "create",
            "notes": [
                {"categories": ["Food", "Drinks"], "content": "Drinks coffee black."},
                {"categories": ["Work"], "content": "Writes Go."},
            ],
        },
    )
    check_answer(created, "create")
    first = created["notes"][0]
    found = call(user, {"action": "search", "query": "coffee"})
    check_answer(found, "search")
    assert found["total"] == 1
    check_answer(call(user, {"action": "search", "query": "nothing like it"}), "search")
    updated = call(
        user,
        {
            "action": "update",
            "id": first["id"],
            "version": 1,
            "categories": ["Food"],
            "content": "Drinks coffee with milk.",
        },
    )
    check_answer(updated, "update")
    check_answer(call(user, {"action": "delete", "id": first["id"], "version": 2}), "delete")

    # Every error kind the tool answers with.
    (second,) = [note for note in created["notes"] if note["id"] != first["id"]]
    check_error(call(user, "not json"), "invalid")
    check_error(
        call(
            user,
            {"action": "create", "notes": [{"categories": ["work"], "content": "writes  GO."}]},
        ),
        "duplicate",
    )
    check_error(call(user, {"action": "delete", "id": first["id"], "version": 2}), "not_found")
    check_error(call(user, {"action": "delete", "id": second["id"], "version": 5}), "stale_version")
    settings.AGENT_MEMORY = {"MAX_NOTES": 1}
    check_error(
        call(user, {"action": "create", "notes": [{"categories": ["A"], "content": "More."}]}),
        "limit_reached",
    )
