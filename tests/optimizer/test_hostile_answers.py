"""Whatever the model answers, or whatever breaks while its answer is read and checked, is one
failed run of that person with the backoff; the sweep and ``memory_optimize`` go on."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone
from django_q.models import Schedule, Task
from django_q.scheduler import scheduler

from agent_memory import LongTermMemory
from agent_memory.models import MemoryNote, MergeRun
from agent_memory.optimizer import proposer, runner
from agent_memory.optimizer.proposer import ProposalParseError, parse_proposals
from agent_memory.optimizer.queue import SCHEDULE_NAME
from agent_memory.stores.orm import DjangoStore
from tests import scripted_model
from tests.scripted_model import groups

pytestmark = pytest.mark.django_db

NESTED = "[" * 200_000
POISON = "Reads poetry on Sundays"


def merge_or_poison(notes):
    """The answer for a person's notes: garbage for the one holding POISON, a merge otherwise."""
    if any(note["content"].startswith(POISON) for note in notes):
        return NESTED
    return groups(
        {
            "ids": [note["id"] for note in notes],
            "categories": ["Drinks"],
            "content": "Likes green tea, especially in the morning",
        }
    )


def two_people(make_user):
    """A person whose answer will be garbage, and one whose notes merge; both have duplicates."""
    memory = LongTermMemory()
    poisoned, fine = make_user(), make_user()
    memory.create_notes(
        poisoned,
        [
            {"categories": ["Drinks"], "content": POISON},
            {"categories": ["Drinks"], "content": POISON + " and Saturdays"},
        ],
    )
    memory.create_notes(
        fine,
        [
            {"categories": ["Drinks"], "content": "Likes green tea"},
            {"categories": ["Drinks"], "content": "Likes green tea in the morning"},
        ],
    )
    return memory, poisoned, fine


def test_a_deeply_nested_answer_is_refused_as_unparseable_before_parsing():
    with pytest.raises(ProposalParseError, match="characters long"):
        parse_proposals(NESTED)
    with pytest.raises(ProposalParseError, match="deep"):
        parse_proposals("[" * (proposer.MAX_ANSWER_DEPTH + 1))
    legit = groups({"ids": ["memory:1", "memory:2"], "categories": ["A"], "content": "x [y]"})
    assert parse_proposals(legit)[0]["ids"] == ["memory:1", "memory:2"]


def test_a_nested_answer_is_one_failed_run_with_the_backoff(make_user, settings):
    memory, poisoned, _ = two_people(make_user)
    settings.AGENT_MEMORY = {"MODELS": {"default": scripted_model.configure("nest", NESTED)}}
    before = timezone.now()

    result = memory.optimize(poisoned, force=True)

    assert result.status == "failed" and "characters long" in result.reason
    run = MergeRun.objects.get(user=poisoned)
    assert run.status == "failed"
    state = memory.optimizer_state(poisoned)
    assert state["consecutive_failures"] == 1
    assert state["next_run_at"] >= before + timedelta(hours=1)
    assert MemoryNote.objects.filter(user=poisoned).count() == 2


@pytest.mark.parametrize("error", [RecursionError("deep"), KeyError("ids"), MemoryError()])
def test_anything_the_checks_raise_is_one_failed_run(make_user, settings, monkeypatch, error):
    memory, _, fine = two_people(make_user)
    settings.AGENT_MEMORY = {
        "MODELS": {"default": scripted_model.configure("check", merge_or_poison)}
    }

    def broken(*args, **kwargs):
        raise error

    monkeypatch.setattr(runner, "check_groups", broken)

    result = memory.optimize(fine, force=True)

    assert result.status == "failed" and type(error).__name__ in result.reason
    assert MergeRun.objects.get(user=fine).status == "failed"
    assert memory.optimizer_state(fine)["consecutive_failures"] == 1
    # The run let go of its lease: the next one is due after the backoff, not stuck.
    assert not MergeRun.objects.filter(status="running").exists()


def due(memory, *people):
    for person in people:
        memory.store.record_optimizer_activity(person.pk, at=timezone.now(), model="default")


def test_memory_optimize_exits_0_and_runs_the_next_person_after_a_nested_answer(
    make_user, settings
):
    memory, poisoned, fine = two_people(make_user)
    settings.AGENT_MEMORY = {
        "MODELS": {"default": scripted_model.configure("cmd", merge_or_poison, merge_or_poison)}
    }
    due(memory, poisoned, fine)
    out = StringIO()

    call_command("memory_optimize", stdout=out)  # raises (exit 1) on any exception

    assert f"person {poisoned.pk}: failed" in out.getvalue()
    assert f"person {fine.pk}: succeeded (1 applied, 0 rejected)" in out.getvalue()
    assert MemoryNote.objects.filter(user=fine, source="merge").count() == 1


def test_memory_optimize_goes_on_when_a_person_s_run_cannot_even_start(
    make_user, settings, monkeypatch
):
    memory, poisoned, fine = two_people(make_user)
    settings.AGENT_MEMORY = {
        "MODELS": {"default": scripted_model.configure("cmd2", merge_or_poison)}
    }
    due(memory, poisoned, fine)
    claim = DjangoStore.claim_optimization_run

    def claim_or_break(self, user_id, **kwargs):
        if user_id == poisoned.pk:
            raise RecursionError("maximum recursion depth exceeded")
        return claim(self, user_id, **kwargs)

    monkeypatch.setattr(DjangoStore, "claim_optimization_run", claim_or_break)
    out, err = StringIO(), StringIO()

    call_command("memory_optimize", stdout=out, stderr=err)

    assert f"person {poisoned.pk}: failed — RecursionError" in err.getvalue()
    assert f"person {fine.pk}: succeeded (1 applied, 0 rejected)" in out.getvalue()


def test_the_sweep_runs_the_next_person_after_a_nested_answer(make_user, settings):
    memory, poisoned, fine = two_people(make_user)
    settings.AGENT_MEMORY = {
        "MODELS": {"default": scripted_model.configure("sweep", merge_or_poison, merge_or_poison)}
    }
    due(memory, poisoned, fine)
    Schedule.objects.filter(name=SCHEDULE_NAME).update(
        next_run=timezone.now() - timedelta(minutes=1)
    )

    scheduler()  # sync=True in the test settings: the tasks run right here

    assert Task.objects.filter(func="agent_memory.tasks.sweep", success=True).exists()
    (batch,) = Task.objects.filter(func="agent_memory.tasks.optimize_people")
    assert batch.success and sorted(batch.result) == ["failed", "succeeded"]
    assert dict(MergeRun.objects.values_list("user_id", "status")) == {
        poisoned.pk: "failed",
        fine.pk: "succeeded",
    }
    assert memory.optimizer_state(poisoned)["consecutive_failures"] == 1
    assert MemoryNote.objects.filter(user=fine, source="merge").count() == 1


def test_an_optimize_task_that_breaks_is_logged_and_answers_failed(make_user, monkeypatch):
    from agent_memory import tasks

    _, poisoned, _ = two_people(make_user)

    def broken(self, *args, **kwargs):
        raise RecursionError("deep")

    monkeypatch.setattr(LongTermMemory, "optimize", broken)

    assert tasks.optimize_person(poisoned.pk) == "failed"
