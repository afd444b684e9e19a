"""Property-based tests: call_tool takes any JSON-like input and answers, never raises, and
never writes on an invalid call."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from agent_memory import LongTermMemory
from agent_memory.stores.in_memory import InMemoryStore
from agent_memory.tool import ACTIONS, ANSWER_SCHEMA, ANSWER_SCHEMAS

PERSON, OTHER = 1, 2
KINDS = {"invalid", "duplicate", "limit_reached", "not_found", "stale_version"}

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=30)
    | st.sampled_from(["", " ", "memory:1", "create", "{", "\x00", "a/b", "sk-" + "a" * 20]),
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=10), children, max_size=5)
    ),
    max_leaves=20,
)

ids = st.integers(min_value=-3, max_value=6) | st.integers() | json_values
ids |= st.sampled_from(["memory:1", "memory:2", "memory:3", "2", " memory:1 ", "memory:x", "12x"])
versions = st.integers(min_value=-1, max_value=3) | json_values
versions |= st.sampled_from(["1", "2", 1.0, True])
category = st.sampled_from(["Work", "Food", "work", "", "   ", "a/b", "x" * 61]) | st.text(
    max_size=70
)
categories = st.lists(category, max_size=5) | json_values
content = (
    st.sampled_from(
        [
            "Likes tea.",
            "likes   TEA.",
            "Writes Go.",
            "password: hunter22",
            "4111 1111 1111 1111",
            "x" * 501,
            "",
        ]
    )
    | st.text(max_size=120)
    | json_values
)
note = st.fixed_dictionaries({}, optional={"categories": categories, "content": content})
notes = st.lists(note | json_values, max_size=7) | json_values
queries = st.sampled_from(["tea", "memory:1", "Work", "", "w" * 600]) | st.text() | json_values

shaped = st.fixed_dictionaries(
    {"action": st.sampled_from(ACTIONS) | json_values},
    optional={
        "notes": notes,
        "id": ids,
        "version": versions,
        "categories": categories,
        "content": content,
        "query": queries,
    },
)


def as_json_text(value) -> str:
    return json.dumps(value)


arguments = (
    shaped
    | shaped.map(as_json_text)
    | json_values
    | json_values.map(as_json_text)
    | st.text(max_size=200)
    | st.binary(max_size=50)
)

answer_validator = Draft202012Validator(ANSWER_SCHEMA)


def fresh_memory() -> LongTermMemory:
    memory = LongTermMemory(store=InMemoryStore(), optimizer=False)
    memory.create_notes(
        PERSON,
        [
            {"categories": ["Food"], "content": "Likes tea."},
            {"categories": ["Work"], "content": "Writes Go."},
        ],
    )
    memory.update_note(PERSON, 2, 1, ["Work"], "Writes Go and Python.")
    memory.create_notes(OTHER, [{"categories": ["Food"], "content": "Likes coffee."}])
    return memory


def snapshot(memory: LongTermMemory) -> tuple:
    return tuple(memory.notes(PERSON)), tuple(memory.notes(OTHER))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(arguments)
def test_call_tool_always_answers_and_never_writes_on_an_invalid_call(arguments):
    memory = fresh_memory()
    before = snapshot(memory)

    answer = memory.call_tool(PERSON, arguments)

    assert isinstance(answer, dict)
    json.dumps(answer, allow_nan=False)
    answer_validator.validate(answer)
    after = snapshot(memory)
    if "error" in answer:
        assert answer["error"]["kind"] in KINDS
        assert answer["error"]["message"].strip()
        assert after == before
    else:
        assert after[1] == before[1], "another person's notes never change"
        if "total" in answer:
            assert after == before, "search never writes"


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shaped)
def test_json_text_and_dict_give_the_same_answer(arguments):
    as_dict = fresh_memory().call_tool(PERSON, arguments)
    as_text = fresh_memory().call_tool(PERSON, json.dumps(arguments))
    # Timestamps differ between two fresh memories; everything else is the same.
    for answer in (as_dict, as_text):
        for item in answer.get("notes", []) + ([answer["note"]] if "note" in answer else []):
            item.pop("updated_at")
    assert as_dict == as_text


valid_create = st.fixed_dictionaries(
    {
        "action": st.just("create"),
        "notes": st.lists(
            st.fixed_dictionaries(
                {
                    "categories": st.lists(
                        st.sampled_from(["Work", "Food", "Home", "Tools"]),
                        min_size=1,
                        max_size=3,
                        unique=True,
                    ),
                    "content": st.text(
                        st.characters(codec="utf-8", exclude_categories=["Cs", "Cc"]),
                        min_size=1,
                        max_size=80,
                    ),
                }
            ),
            min_size=1,
            max_size=7,
        ),
    }
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(valid_create)
def test_a_create_writes_all_of_its_notes_or_none(arguments):
    memory = fresh_memory()
    before = memory.notes(PERSON)
    answer = memory.call_tool(PERSON, arguments)
    after = memory.notes(PERSON)
    if "error" in answer:
        assert after == before
    else:
        Draft202012Validator(ANSWER_SCHEMAS["create"]).validate(answer)
        assert len(after) == len(before) + len(arguments["notes"])
        assert {note["id"] for note in answer["notes"]} == {
            note.id for note in after if note not in before
        }
