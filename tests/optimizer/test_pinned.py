"""The optimizer and the person's controls: pinned notes are never sent to the model nor
merged, and a person who turned memory off is not optimized (nor queued by the sweep)."""

from __future__ import annotations

import pytest

from agent_memory import LongTermMemory
from agent_memory.models import MemoryNote, MergeRun
from tests import scripted_model
from tests.scripted_model import groups

pytestmark = pytest.mark.django_db


@pytest.fixture
def memory() -> LongTermMemory:
    return LongTermMemory()


@pytest.fixture
def model(settings):
    def script(*answers):
        settings.AGENT_MEMORY = {
            "MODELS": {"default": scripted_model.configure("pinned", *answers)}
        }

    return script


def notes(memory, user):
    pinned = memory.create_notes(
        user,
        [
            {"categories": ["Drinks"], "content": "Drinks rooibos at home"},
            {"categories": ["Drinks"], "content": "Drinks rooibos at home in the morning"},
        ],
        source="person",
        pinned=True,
    )
    plain = memory.create_notes(
        user,
        [
            {"categories": ["Drinks"], "content": "Likes black coffee"},
            {"categories": ["Drinks"], "content": "Likes black coffee in the evening"},
        ],
    )
    return pinned, plain


def test_pinned_notes_are_never_sent_to_the_model(memory, user, model):
    pinned, plain = notes(memory, user)
    model(groups())
    scripted_model.CALLS.clear()
    memory.optimize(user, force=True)
    sent = "\n".join(message["content"] for call in scripted_model.CALLS for message in call)
    assert scripted_model.CALLS  # the unpinned pair was sent
    assert all(f'"id": "{note.key}"' not in sent and "rooibos" not in sent for note in pinned)
    assert all(f'"id": "{note.key}"' in sent for note in plain)


def test_a_group_naming_a_pinned_note_is_rejected_and_nothing_is_merged(memory, user, model):
    pinned, plain = notes(memory, user)
    first, second = pinned
    model(
        groups(
            {
                "ids": [first.key, second.key],
                "categories": ["Drinks"],
                "content": "Drinks rooibos at home, mostly in the morning",
            },
            {
                "ids": [plain[0].key, plain[1].key],
                "categories": ["Drinks"],
                "content": "Likes black coffee, especially in the evening",
            },
        )
    )
    result = memory.optimize(user, force=True)
    assert result.applied == 1  # the coffee notes; the pinned tea notes stay as they are
    left = {note.id: note for note in memory.notes(user)}
    assert all(left.get(note.id) == note for note in pinned)
    merged = MemoryNote.objects.get(user=user, source="merge")
    assert merged.content == "Likes black coffee, especially in the evening"
    run = MergeRun.objects.get(pk=result.run_id)
    assert [item["code"] for item in run.rejected] == ["pinned"]


def test_with_memory_off_the_optimizer_skips_the_person_and_the_sweep_queues_nobody(
    memory, user, model, monkeypatch
):
    notes(memory, user)
    model(groups())
    memory.after_turn(user)  # active: due for the sweep
    memory.set_enabled(user, False)
    runs = MergeRun.objects.filter(user=user).count()
    scripted_model.CALLS.clear()
    assert memory.optimize(user, force=True).status == "skipped"
    memory.after_turn(user)
    assert scripted_model.CALLS == []
    assert MergeRun.objects.filter(user=user).count() == runs

    from agent_memory import tasks

    queued = []
    monkeypatch.setattr("django_q.tasks.async_task", lambda *a, **k: queued.append(a))
    assert tasks.sweep() == 0 and queued == []
    memory.set_enabled(user, True)
    assert memory.optimize(user, force=True).status == "succeeded"
