"""The person's controls in the core: pinned notes, the memory switch, temporary chats.

Every test runs on the ORM store (SQLite, or PostgreSQL with ``DATABASE_URL``) and on the
in-memory store, through the ``memory`` and ``people`` fixtures.
"""

from __future__ import annotations

import pytest

from agent_memory import LongTermMemory
from agent_memory.errors import InvalidNote, LimitReached, ReadOnlyNote
from agent_memory.prompt import check_pinned_room, note_line
from agent_memory.stores.in_memory import InMemoryStore
from agent_memory.tool import ANSWER_SCHEMA, TOOL_NAME
from tests.stores.five_methods import FiveMethodStore

RULE = {"categories": ["Rules"], "content": "Never suggest npm; use pnpm."}


def pin(memory, user, rule=RULE):
    (note,) = memory.create_notes(user, [rule], source="person", pinned=True)
    return note


def kind(answer):
    return answer.get("error", {}).get("kind")


# --- pinned notes: the agent reads, never changes ---------------------------------------------


def test_the_agent_cannot_update_a_pinned_note(memory, people):
    ann, _ = people
    note = pin(memory, ann)
    answer = memory.call_tool(
        ann,
        {
            "action": "update",
            "id": note.key,
            "version": note.version,
            "categories": ["Rules"],
            "content": "Suggest npm freely.",
        },
    )
    assert kind(answer) == "read_only"
    assert "Suggest the change to the person" in answer["error"]["message"]
    assert memory.notes(ann) == [note]


def test_the_agent_cannot_delete_a_pinned_note(memory, people):
    ann, _ = people
    note = pin(memory, ann)
    answer = memory.call_tool(ann, {"action": "delete", "id": note.id, "version": note.version})
    assert kind(answer) == "read_only"
    assert memory.notes(ann) == [note]
    with pytest.raises(ReadOnlyNote):
        memory.delete_note(ann, note.id, note.version)


def test_the_person_edits_unpins_and_deletes_a_pinned_note(memory, people):
    ann, _ = people
    note = pin(memory, ann)
    edited = memory.update_note(
        ann, note.id, 1, ["Rules"], "Never suggest npm or yarn.", source="person"
    )
    assert (edited.pinned, edited.version) == (True, 2)
    unpinned = memory.set_pinned(ann, note.id, 2, False)
    assert (unpinned.pinned, unpinned.version, unpinned.content) == (False, 3, edited.content)
    # Unpinned, it is the agent's again.
    answer = memory.call_tool(ann, {"action": "delete", "id": note.key, "version": 3})
    assert answer == {"deleted": note.id}


def test_a_pinned_note_deleted_by_the_person_is_gone(memory, people):
    ann, _ = people
    note = pin(memory, ann)
    memory.delete_note(ann, note.id, 1, source="person")
    assert memory.notes(ann) == []


def test_the_tool_reads_pinned_notes_and_says_they_are_pinned(memory, people):
    ann, _ = people
    note = pin(memory, ann)
    answer = memory.call_tool(ann, {"action": "search", "query": "npm"})
    assert [item["id"] for item in answer["notes"]] == [note.id]
    assert answer["notes"][0]["pinned"] is True
    assert answer["notes"][0] == note.as_dict()


@pytest.mark.parametrize(
    "arguments",
    [
        {"action": "create", "notes": [{**RULE, "pinned": True}]},
        {"action": "create", "notes": [RULE], "pinned": True},
        {"action": "update", "id": 1, "version": 1, **RULE, "pinned": False},
        {"action": "delete", "id": 1, "version": 1, "pinned": False},
        {"action": "search", "query": "npm", "pinned": True},
    ],
)
def test_a_pinned_key_in_the_tools_input_is_invalid(memory, people, arguments):
    ann, _ = people
    answer = memory.call_tool(ann, arguments)
    assert kind(answer) == "invalid"
    assert "only the person pins" in answer["error"]["message"]
    assert memory.notes(ann) == []


def test_the_agent_cannot_pin_through_the_python_api(memory, people):
    ann, _ = people
    with pytest.raises(InvalidNote):
        memory.create_notes(ann, [RULE], pinned=True)
    (note,) = memory.create_notes(ann, [RULE])
    with pytest.raises(InvalidNote):
        memory.update_note(ann, note.id, 1, ["Rules"], note.content, pinned=True)
    assert memory.notes(ann) == [note]


def test_an_edit_that_does_not_say_keeps_the_pin(memory, people):
    ann, _ = people
    note = pin(memory, ann)
    edited = memory.update_note(ann, note.id, 1, ["Rules", "Tools"], note.content, source="admin")
    assert edited.pinned and memory.notes(ann)[0].pinned


def test_a_pin_changes_the_version_so_an_agent_that_read_it_unpinned_is_stale(memory, people):
    ann, _ = people
    (note,) = memory.create_notes(ann, [RULE])
    memory.set_pinned(ann, note.id, 1, True)
    answer = memory.call_tool(ann, {"action": "delete", "id": note.key, "version": 1})
    assert kind(answer) == "stale_version"
    assert memory.notes(ann)[0].pinned


# --- pinned notes in the block ----------------------------------------------------------------


def test_pinned_notes_come_first_in_the_block_marked_pinned(memory, people):
    ann, _ = people
    rule = pin(memory, ann)
    memory.create_notes(ann, [{"categories": ["Food"], "content": "Likes green tea."}])
    text = memory.begin_turn(ann, None).text
    lines = text.splitlines()
    assert lines[2] == note_line(memory.note(ann, rule.id))
    assert 'pinned="true">Never suggest npm; use pnpm.</note>' in lines[2]
    assert "Likes green tea." in lines[3] and "pinned=" not in lines[3]


def test_pinned_notes_are_shown_whatever_the_budget_holds(memory, people, settings):
    ann, _ = people
    rule = pin(memory, ann)
    memory.create_notes(
        ann,
        [{"categories": ["Facts"], "content": f"Fact number {n}: " + "x" * 300} for n in range(5)],
    )
    # Room for the pinned note and nothing else.
    settings.AGENT_MEMORY = {"MAX_BLOCK_CHARS": 2 * len(note_line(rule)) + 10}
    blocks = memory.blocks(ann)
    assert blocks[0].key == rule.key and not blocks[0].hidden
    assert all(block.hidden for block in blocks[1:])
    text = memory.begin_turn(ann, None).text
    assert rule.content in text and "[5 more notes not shown" in text
    # Even when the budget is later set below the pinned notes themselves.
    settings.AGENT_MEMORY = {"MAX_BLOCK_CHARS": 10}
    assert rule.content in memory.begin_turn(ann, None).text


def test_pinning_past_half_of_the_block_is_limit_reached(memory, people, settings):
    ann, _ = people
    long_rule = {"categories": ["Rules"], "content": "Always " + "y" * 300}
    first = pin(memory, ann, long_rule)
    settings.AGENT_MEMORY = {"MAX_BLOCK_CHARS": 2 * (len(note_line(first)) + 1) + 1}
    (other,) = memory.create_notes(ann, [{"categories": ["Rules"], "content": "z" * 200}])
    with pytest.raises(LimitReached) as raised:
        memory.set_pinned(ann, other.id, 1, True)
    assert raised.value.code == "pinned_too_long"
    assert "unpin one" in raised.value.message
    assert not memory.note(ann, other.id).pinned
    with pytest.raises(LimitReached):
        memory.create_notes(
            ann, [{"categories": ["Rules"], "content": "Short rule."}], source="person", pinned=True
        )
    with pytest.raises(LimitReached):
        memory.update_note(ann, first.id, 1, ["Rules"], first.content + " more", source="person")
    # Unpinned, the same text is fine: the budget is only about pinned notes.
    assert memory.set_pinned(ann, first.id, 1, False).version == 2
    assert memory.set_pinned(ann, other.id, 1, True).pinned


def test_check_pinned_room_counts_only_pinned_notes(memory, people):
    ann, _ = people
    rule = pin(memory, ann)
    check_pinned_room([rule], 2 * (len(note_line(rule)) + 1))
    with pytest.raises(LimitReached):
        check_pinned_room([rule], 2 * (len(note_line(rule)) + 1) - 2)


def test_instructions_tell_the_model_what_a_pinned_note_is():
    text = LongTermMemory(store=InMemoryStore()).instructions
    assert 'pinned="true"' in text and "never update or delete" in text
    assert "read_only" in text and "disabled" in text


# --- the memory switch --------------------------------------------------------------------------


def test_memory_is_on_by_default_and_the_switch_is_per_person(memory, people):
    ann, bob = people
    assert memory.enabled(ann) and memory.enabled(bob)
    memory.set_enabled(ann, False)
    assert not memory.enabled(ann) and memory.enabled(bob)
    with pytest.raises(InvalidNote):
        memory.set_enabled(ann, "no")


def test_memory_off_gives_no_block_no_tool_and_disabled_answers(memory, people):
    ann, _ = people
    note = pin(memory, ann)
    (plain,) = memory.create_notes(ann, [{"categories": ["Food"], "content": "Likes tea."}])
    memory.set_enabled(ann, False)
    turn = memory.begin_turn(ann, None)
    assert turn.text == "" and not turn.read_error
    app_tool = {"type": "function", "function": {"name": "weather", "parameters": {}}}
    assert memory.tools([app_tool], "openai", user=ann) == [app_tool]
    assert len(memory.tools([app_tool], "openai")) == 2
    for arguments in [
        {"action": "create", "notes": [{"categories": ["Food"], "content": "Likes coffee."}]},
        {"action": "update", "id": plain.id, "version": 1, "categories": ["F"], "content": "x"},
        {"action": "delete", "id": plain.id, "version": 1},
        {"action": "search", "query": "tea"},
        "not even JSON",
    ]:
        answer = memory.call_tool(ann, arguments)
        assert kind(answer) == "disabled", arguments
        assert "Do not bring memory up" in answer["error"]["message"]
    # The notes stay, and the person still sees, edits and exports them.
    assert {n.id for n in memory.notes(ann)} == {note.id, plain.id}
    edited = memory.update_note(ann, plain.id, 1, ["Food"], "Likes black tea.", source="person")
    assert edited.version == 2
    exported = memory.export(ann)
    assert {item["content"] for item in exported["notes"]} == {note.content, edited.content}


def test_memory_on_again_gives_the_next_turn_of_a_running_chat_the_full_block(memory, people):
    ann, _ = people
    memory.create_notes(ann, [{"categories": ["Food"], "content": "Likes tea."}])
    first = memory.begin_turn(ann, None)
    assert "Likes tea." in first.text
    memory.set_enabled(ann, False)
    off = memory.begin_turn(ann, first.state)
    assert off.text == "" and off.state["off"] is True
    still_off = memory.begin_turn(ann, off.state)
    assert still_off.text == ""
    memory.update_note(ann, memory.notes(ann)[0].id, 1, ["Food"], "Likes coffee.", source="person")
    memory.set_enabled(ann, True)
    again = memory.begin_turn(ann, still_off.state)
    assert again.text.startswith("<agent_memory>") and "Likes coffee." in again.text
    assert "off" not in again.state
    assert memory.begin_turn(ann, again.state).text == ""


def test_memory_off_runs_no_optimizer(memory, people):
    ann, _ = people
    memory.set_enabled(ann, False)
    result = memory.optimize(ann, force=True)
    assert result.status == "skipped" and "turned memory off" in result.reason
    memory.after_turn(ann)
    if memory.can_merge:
        assert memory.optimizer_state(ann)["next_run_at"] is None


def test_a_turn_with_memory_off_leaves_no_trace_for_the_optimizer(memory, people, monkeypatch):
    ann, bob = people
    queued = []
    monkeypatch.setattr(
        "agent_memory.optimizer.runner.enqueue_run", lambda people, using: queued.extend(people)
    )
    memory.set_enabled(ann, False)
    memory.after_turn(ann)
    memory.after_turn(bob)
    # Bob's turn counts as activity and queues his run; Ann's, with memory off, neither.
    assert memory.store.get_optimizer_state(ann.pk).last_activity_at is None
    assert memory.store.get_optimizer_state(bob.pk).last_activity_at is not None
    assert queued == [(bob.pk, "default")]


def test_a_failing_switch_does_not_break_the_turn(people):
    class Broken(InMemoryStore):
        def memory_enabled(self, user_id):
            raise RuntimeError("database down")

    memory = LongTermMemory(store=Broken())
    turn = memory.begin_turn(1, None)
    assert (turn.text, turn.read_error, turn.state.get("read_failed")) == ("", True, True)
    assert kind(memory.call_tool(1, {"action": "search", "query": "tea"})) == "invalid"


def test_a_store_without_a_switch_of_its_own_keeps_it_in_this_process():
    memory = LongTermMemory(store=FiveMethodStore(), optimizer=False)
    assert memory.enabled(1)
    memory.set_enabled(1, False)
    assert not memory.enabled(1) and memory.enabled(2)


# --- temporary chats ------------------------------------------------------------------------------


def test_a_temporary_chat_neither_reads_nor_writes_memory(memory, people):
    ann, _ = people
    (note,) = memory.create_notes(ann, [{"categories": ["Food"], "content": "Likes tea."}])
    turn = memory.begin_turn(ann, None, temporary=True)
    assert turn.text == ""
    assert TOOL_NAME not in str(memory.tools([], "anthropic", user=ann, temporary=True))
    assert memory.tools([], "json", temporary=True) == []
    answer = memory.call_tool(
        ann,
        {"action": "create", "notes": [{"categories": ["Food"], "content": "Likes coffee."}]},
        temporary=True,
    )
    assert kind(answer) == "disabled" and "temporary chat" in answer["error"]["message"]
    search = memory.call_tool(ann, {"action": "search", "query": "tea"}, temporary=True)
    assert kind(search) == "disabled"
    assert memory.notes(ann) == [note]
    # The same person's ordinary chat is untouched.
    assert "Likes tea." in memory.begin_turn(ann, None).text


def test_disabled_and_read_only_answers_follow_the_answer_schema(memory, people):
    from jsonschema import Draft202012Validator

    ann, _ = people
    note = pin(memory, ann)
    validator = Draft202012Validator(ANSWER_SCHEMA)
    read_only = memory.call_tool(ann, {"action": "delete", "id": note.id, "version": 1})
    validator.validate(read_only)
    validator.validate(memory.call_tool(ann, {"action": "search", "query": "npm"}))
    validator.validate(memory.call_tool(ann, {"action": "search", "query": "npm"}, temporary=True))


# --- export and import keep the pins -----------------------------------------------------------


def test_export_and_import_keep_a_pinned_note_pinned(memory, people):
    ann, bob = people
    rule = pin(memory, ann)
    memory.create_notes(ann, [{"categories": ["Food"], "content": "Likes tea."}])
    document = memory.export(ann)
    assert {item["content"]: item["pinned"] for item in document["notes"]} == {
        rule.content: True,
        "Likes tea.": False,
    }
    result = memory.import_notes(bob, document)
    assert {note.content: note.pinned for note in result.created} == {
        rule.content: True,
        "Likes tea.": False,
    }
    assert {note.content: note.pinned for note in memory.notes(bob)}[rule.content] is True


def test_importing_pinned_notes_past_half_of_the_block_writes_nothing(memory, people, settings):
    ann, _ = people
    settings.AGENT_MEMORY = {"MAX_BLOCK_CHARS": 300}
    document = {
        "format": "agent_memory",
        "version": 1,
        "notes": [
            {"categories": ["Rules"], "content": "a" * 120, "pinned": True},
            {"categories": ["Rules"], "content": "b" * 120, "pinned": True},
        ],
    }
    with pytest.raises(LimitReached):
        memory.import_notes(ann, document)
    assert memory.notes(ann) == []


@pytest.mark.django_db
def test_the_switch_is_kept_in_the_database_for_every_server(make_user):
    from agent_memory.models import MemoryUserLock
    from agent_memory.stores.orm import DjangoStore

    ann = make_user()
    LongTermMemory(store=DjangoStore()).set_enabled(ann, False)
    assert MemoryUserLock.objects.get(user=ann).memory_enabled is False
    # Another process builds its own memory: it reads the same switch.
    assert not LongTermMemory(store=DjangoStore()).enabled(ann)
    # The person's counts in the same row are right when the row is created by the switch.
    LongTermMemory(store=DjangoStore()).create_notes(ann, [RULE])
    assert MemoryUserLock.objects.get(user=ann).note_count == 1
