"""Property-based: whatever tool calls the agent makes, in whatever order, a note the person
pinned stays exactly as they left it."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_memory import LongTermMemory
from agent_memory.stores.in_memory import InMemoryStore

PERSON = 1

# Ids 1-2 are pinned, 3-4 are not; versions 1-3 hit the current one often.
ids = st.sampled_from([1, 2, 3, 4, "memory:1", "memory:2", "memory:3", " memory:1 ", "2"])
versions = st.integers(min_value=1, max_value=3) | st.sampled_from(["1", 1.0, True])
contents = st.sampled_from(["Use npm.", "Never suggest npm; use pnpm.", "Likes tea.", "x"])
categories = st.sampled_from([["Rules"], ["Food"], ["Rules", "Tools"]])
notes = st.lists(
    st.fixed_dictionaries(
        {"categories": categories, "content": contents},
        optional={"pinned": st.booleans()},
    ),
    min_size=1,
    max_size=3,
)
call = st.one_of(
    st.fixed_dictionaries(
        {"action": st.just("update"), "id": ids, "version": versions},
        optional={
            "categories": categories,
            "content": contents,
            "pinned": st.booleans(),
        },
    ),
    st.fixed_dictionaries(
        {"action": st.just("delete"), "id": ids, "version": versions},
        optional={"pinned": st.booleans()},
    ),
    st.fixed_dictionaries({"action": st.just("create"), "notes": notes}),
    st.fixed_dictionaries({"action": st.just("search"), "query": contents}),
)
calls = st.lists(call | call.map(json.dumps), min_size=1, max_size=12)


def fresh_memory() -> LongTermMemory:
    memory = LongTermMemory(store=InMemoryStore(), optimizer=False)
    memory.create_notes(
        PERSON,
        [
            {"categories": ["Rules"], "content": "Never suggest npm; use pnpm."},
            {"categories": ["Rules"], "content": "Address me informally."},
        ],
        source="person",
        pinned=True,
    )
    memory.create_notes(
        PERSON,
        [
            {"categories": ["Food"], "content": "Likes tea."},
            {"categories": ["Work"], "content": "Writes Go."},
        ],
    )
    return memory


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls)
def test_no_sequence_of_tool_calls_changes_or_deletes_a_pinned_note(sequence):
    memory = fresh_memory()
    pinned = [note for note in memory.notes(PERSON) if note.pinned]
    assert len(pinned) == 2
    for arguments in sequence:
        answer = memory.call_tool(PERSON, arguments)
        assert isinstance(answer, dict)
    after = {note.id: note for note in memory.notes(PERSON)}
    for note in pinned:
        assert after.get(note.id) == note
    # Nor does the agent ever pin a note of its own.
    assert {note.id for note in after.values() if note.pinned} == {note.id for note in pinned}
