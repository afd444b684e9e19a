"""What the model believes about memory, rebuilt from the texts begin_turn gave it.

A hypothesis state machine drives one chat through random creates, updates, deletes, budget
changes (which hide notes), compactions, group turns and failed reads. After every turn that
tells the model the state of memory (a full block, or a difference after a compaction), what
the model believes is rebuilt only from the texts it received, and it must match the store:
no deleted note believed valid, no stale version that no line corrected.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import replace
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)

from agent_memory import LongTermMemory
from agent_memory.prompt import DIFFERENCE_HEADER, HEADER, OPEN
from agent_memory.stores.in_memory import InMemoryStore
from agent_memory.stores.orm import DjangoStore
from tests.budgets import examples

#: Chats in memory (pure Python): generous every day, the full count in the long run.
EXAMPLES = examples(quick=100, long=300)
#: Chats on the database: a few each day, the long run's full count with the marker's job.
DATABASE_EXAMPLES = examples(quick=25, long=300)
#: Steps per chat: long enough in memory to reach "hidden, then deleted, then compacted";
#: shorter on the database, where every step is a few queries.
STEPS = 25
DATABASE_STEPS = 6

_NOTE = re.compile(r'^<note key="memory:(\d+)" version="(\d+)"')
_GONE = re.compile(r'^\[No longer valid: "memory:(\d+)"\]$')
_HIDDEN = re.compile(r'^\[Not shown to save space, but still valid: "memory:(\d+)"\]$')
#: A note the model was told is valid without its text or version.
VALID_UNSEEN = 0

_contents = itertools.count(1)
_usernames = itertools.count(1)


class BudgetMemory(LongTermMemory):
    """``LongTermMemory`` whose block budget the test changes between turns."""

    max_block_chars = 12_000

    @property
    def limits(self):
        return replace(super().limits, max_block_chars=self.max_block_chars)


def read_text(beliefs: dict[int, int], text: str) -> dict[int, int]:
    """What the model believes after reading ``text``, given what it believed before."""
    if not text:
        return beliefs
    lines = text.split("\n")
    assert lines[0] == OPEN, text
    if lines[1] == HEADER:
        beliefs = {}  # a full block states the whole of memory afresh
    else:
        assert lines[1] == DIFFERENCE_HEADER, text
        beliefs = dict(beliefs)
    for line in lines[2:-1]:
        if match := _NOTE.match(line):
            beliefs[int(match[1])] = int(match[2])
        elif match := _GONE.match(line):
            beliefs.pop(int(match[1]), None)
        elif match := _HIDDEN.match(line):
            beliefs[int(match[1])] = VALID_UNSEEN
    return beliefs


def assert_believes_memory(beliefs: dict[int, int], memory: LongTermMemory, user: Any) -> None:
    notes = {note.id: note for note in memory.notes(user)}
    for note_id, version in beliefs.items():
        assert note_id in notes, f"the model believes deleted memory:{note_id} is still valid"
        if version != VALID_UNSEEN:
            assert version == notes[note_id].version, (
                f"the model holds version {version} of memory:{note_id}, "
                f"now at {notes[note_id].version}, and no line corrected it"
            )
    for block in memory.blocks(user):
        if not block.hidden:
            note_id = int(block.key.split(":")[1])
            assert beliefs.get(note_id) == notes[note_id].version, (
                f"{block.key} is in the block but the model does not know its current version"
            )


class ChatMachine(RuleBasedStateMachine):
    """One person's chat with random edits between turns."""

    make_store: Any = InMemoryStore
    make_user: Any = staticmethod(lambda: next(_usernames))

    def __init__(self) -> None:
        super().__init__()
        self.memory = BudgetMemory(store=self.make_store(), optimizer=False)
        self.user = self.make_user()
        self.state: dict[str, Any] | None = None
        self.beliefs: dict[int, int] = {}
        self.synced = False

    def _notes(self):
        # Oldest first: small picks (which hypothesis tries first) reach the notes a tight
        # budget hides.
        return self.memory.notes(self.user)[::-1]

    @initialize(count=st.integers(0, 4))
    def a_chat_begins(self, count):
        if count:
            self.create(count, 10)
        self._turn()

    # --- what happens to memory between turns ---

    @rule(count=st.integers(1, 3), length=st.integers(5, 80))
    def create(self, count, length):
        self.memory.create_notes(
            self.user,
            [
                {"categories": ["Topic"], "content": f"Fact {next(_contents)} " + "x" * length}
                for _ in range(count)
            ],
        )

    @rule(pick=st.integers(0, 50), length=st.integers(5, 80))
    def update(self, pick, length):
        notes = self._notes()
        if notes:
            note = notes[pick % len(notes)]
            content = f"Fact {next(_contents)} " + "y" * length
            self.memory.update_note(self.user, note.id, note.version, ["Topic"], content)

    @rule(pick=st.integers(0, 50))
    def delete(self, pick):
        notes = self._notes()
        if notes:
            note = notes[pick % len(notes)]
            self.memory.delete_note(self.user, note.id, note.version)

    # --- the turns ---

    def _turn(self, *, reason=None, group=False, fail=False) -> None:
        store = self.memory.store
        if fail:

            def broken(user_id):
                raise ConnectionError("the database went away")

            store.list_notes = store.note_listing = broken
        try:
            turn = self.memory.begin_turn(self.user, self.state, reason=reason, group=group)
        finally:
            if fail:
                del store.list_notes, store.note_listing
        self.state = turn.state
        self.beliefs = read_text(self.beliefs, turn.text)
        full = turn.text.startswith(f"{OPEN}\n{HEADER}\n")
        self.synced = full or (reason == "compacted" and not turn.read_error and not group)

    @rule(
        kind=st.sampled_from(
            ["ordinary", "compacted", "compacted", "compacted", "fresh", "redo", "group", "failed"]
        ),
        budget=st.sampled_from([None, None, 450, 700, 12_000]),
    )
    def turn(self, kind, budget):
        if budget is not None:  # the host changed MAX_BLOCK_CHARS: notes get hidden or shown
            self.memory.max_block_chars = budget
        if kind == "fresh":  # compacted, and no answer is left in the tail
            self.state = None
        reason = {"compacted": "compacted", "fresh": "compacted", "redo": "first_message_edited"}
        self._turn(reason=reason.get(kind), group=kind == "group", fail=kind == "failed")

    @invariant()
    def the_model_believes_memory_after_every_telling_turn(self):
        if self.synced:
            assert_believes_memory(self.beliefs, self.memory, self.user)
            self.synced = False


MACHINE_SETTINGS = settings(
    max_examples=EXAMPLES,
    stateful_step_count=STEPS,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
DATABASE_SETTINGS = settings(
    MACHINE_SETTINGS, max_examples=DATABASE_EXAMPLES, stateful_step_count=DATABASE_STEPS
)


@pytest.mark.long_properties
def test_the_model_never_believes_a_deleted_note_or_a_stale_version_in_memory():
    run_state_machine_as_test(ChatMachine, settings=MACHINE_SETTINGS)


@pytest.mark.long_properties
@pytest.mark.django_db
def test_the_model_never_believes_a_deleted_note_or_a_stale_version_in_the_database():
    users = get_user_model()

    class DatabaseChat(ChatMachine):
        make_store = DjangoStore
        make_user = staticmethod(
            lambda: users.objects.create(username=f"chat-person-{next(_usernames)}")
        )

    run_state_machine_as_test(DatabaseChat, settings=DATABASE_SETTINGS)


# --- the reproduction from the report --------------------------------------------------------


def test_a_hidden_note_deleted_after_compaction_is_reported_no_longer_valid(memory, person):
    """A chat whose block hid memory:1 after a compaction is told when memory:1 is deleted."""
    first = memory.create_notes(person, [{"categories": ["A"], "content": "The oldest fact."}])[0]
    state = memory.begin_turn(person, None).state
    memory.create_notes(
        person,
        [
            {"categories": ["B"], "content": "A newer fact " + "n" * 300},
            {"categories": ["C"], "content": "The newest fact " + "m" * 300},
        ],
    )
    tight = BudgetMemory(store=memory.store, optimizer=False)
    tight.max_block_chars = len(tight.begin_turn(person, None).text) - 40
    hid = tight.begin_turn(person, state, reason="compacted")
    assert f'[Not shown to save space, but still valid: "{first.key}"]' in hid.text
    tight.delete_note(person, first.id, first.version)
    after = tight.begin_turn(person, hid.state, reason="compacted")
    assert f'[No longer valid: "{first.key}"]' in after.text.split("\n")
    assert read_text(read_text(read_text({}, ""), hid.text), after.text).get(first.id) is None


def test_a_hidden_note_is_announced_once_and_its_line_comes_back_when_it_fits(memory, person):
    first = memory.create_notes(person, [{"categories": ["A"], "content": "The oldest fact."}])[0]
    state = memory.begin_turn(person, None).state
    memory.create_notes(person, [{"categories": ["B"], "content": "A newer fact " + "n" * 300}])
    tight = BudgetMemory(store=memory.store, optimizer=False)
    tight.max_block_chars = len(tight.begin_turn(person, None).text) - 10
    hid = tight.begin_turn(person, state, reason="compacted")
    assert hid.text.count(first.key) == 1
    assert tight.begin_turn(person, hid.state, reason="compacted").text == ""
    tight.max_block_chars = 12_000
    back = tight.begin_turn(person, hid.state, reason="compacted")
    assert f'<note key="{first.key}" version="1"' in back.text
