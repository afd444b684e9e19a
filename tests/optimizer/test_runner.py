"""The optimizer's runs over the ORM store: apply, reject, backoff, lease, edits while thinking,
merges and revert."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from agent_memory import LongTermMemory
from agent_memory.errors import DuplicateNote, LimitReached, MergeConflict, NoteNotFound
from agent_memory.models import MemoryNote, MergedNoteSnapshot, MergeRun
from agent_memory.optimizer import runner
from agent_memory.optimizer.backends import BackendError
from tests import scripted_model
from tests.scripted_model import groups

pytestmark = pytest.mark.django_db

HOUR = timedelta(hours=1)


class Clock:
    def __init__(self) -> None:
        self.now = timezone.now()

    def __call__(self):
        return self.now

    def advance(self, delta: timedelta) -> None:
        self.now += delta


@pytest.fixture
def clock(monkeypatch) -> Clock:
    clock = Clock()
    monkeypatch.setattr(runner, "now", clock)
    return clock


@pytest.fixture
def memory() -> LongTermMemory:
    return LongTermMemory()


@pytest.fixture
def model(settings):
    """``model(*answers)`` scripts the "default" model alias for this test."""

    def script(*answers, alias: str = "default", **agent_memory):
        settings.AGENT_MEMORY = {
            "MODELS": {alias: scripted_model.configure(f"runner-{alias}", *answers)},
            **agent_memory,
        }

    return script


def tea(memory, user):
    return memory.create_notes(
        user,
        [
            {"categories": ["Drinks"], "content": "Likes green tea"},
            {"categories": ["Drinks"], "content": "Likes green tea in the morning"},
            {"categories": ["Work"], "content": "Works at Stripe"},
            {"categories": ["Work"], "content": "Backend developer at Stripe"},
        ],
    )


def tea_group(first, second, content="Likes green tea, especially in the morning"):
    return {"ids": [first.key, second.key], "categories": ["Drinks"], "content": content}


def test_good_group_is_applied_and_bad_one_rejected_with_a_reason(memory, user, model, clock):
    a, b, c, d = tea(memory, user)
    model(
        groups(
            tea_group(a, b),
            {"ids": [c.id, d.id], "categories": ["Work"], "content": "Backend developer"},
        )
    )
    result = memory.optimize(user)
    assert (result.status, result.applied, result.rejected) == ("succeeded", 1, 1)
    contents = sorted(note.content for note in memory.notes(user))
    assert contents == [
        "Backend developer at Stripe",
        "Likes green tea, especially in the morning",
        "Works at Stripe",
    ]
    merged = MemoryNote.objects.get(user=user, source="merge")
    run = MergeRun.objects.get(pk=result.run_id)
    assert run.status == "succeeded"
    assert run.applied == [{"index": 0, "merged_id": merged.pk, "source_ids": [a.id, b.id]}]
    (rejection,) = run.rejected
    assert rejection["code"] == "lost_detail" and "Stripe" in rejection["reason"]
    assert run.proposals["schema"] == 1 and len(run.proposals["groups"]) == 2
    snapshot = MergedNoteSnapshot.objects.get(run=run)
    assert snapshot.sources["schema"] == 1
    assert [item["id"] for item in snapshot.sources["notes"]] == [a.id, b.id]


def test_the_model_sees_the_notes_with_ids_and_categories(memory, user, model, clock):
    a, *_ = tea(memory, user)
    model(groups())
    scripted_model.CALLS.clear()
    memory.optimize(user)
    (messages,) = scripted_model.CALLS
    assert messages[0]["role"] == "system" and "JSON" in messages[0]["content"]
    assert f'"id": "{a.key}"' in messages[-1]["content"]
    assert '"categories": ["Drinks"]' in messages[-1]["content"]


def test_backoff_is_1h_6h_24h_24h_and_success_resets_it(memory, user, model, clock):
    tea(memory, user)
    model(
        "I could not find anything.",  # unparsable
        BackendError("connection refused"),  # transport error
        TimeoutError("timed out"),  # timeout
        groups({"ids": [1, 2], "categories": ["Nope"], "content": "x"}),  # all rejected
        groups(),  # no duplicates: success
    )
    waits = []
    for _ in range(4):
        result = memory.optimize(user)
        assert result.status == "failed" and result.reason
        state = memory.optimizer_state(user)
        waits.append(state["next_run_at"] - clock.now)
        clock.advance(HOUR / 2)
        assert memory.optimize(user).status == "skipped"  # not due yet
        clock.now = state["next_run_at"]
    assert waits == [HOUR, 6 * HOUR, 24 * HOUR, 24 * HOUR]
    assert memory.optimizer_state(user)["consecutive_failures"] == 4
    assert memory.optimize(user).status == "succeeded"
    state = memory.optimizer_state(user)
    assert state["consecutive_failures"] == 0
    assert state["last_success_at"] == clock.now
    assert state["next_run_at"] == clock.now + 24 * HOUR
    reasons = list(MergeRun.objects.order_by("pk").values_list("error", flat=True))
    assert "JSON" in reasons[0]
    assert "connection refused" in reasons[1]
    assert "TimeoutError" in reasons[2]
    assert reasons[3] == "Every proposed group was rejected."


def test_interval_comes_from_the_optimizer_option(user, model, clock):
    memory = LongTermMemory(optimizer={"interval_hours": 12})
    tea(memory, user)
    model(groups())
    assert memory.optimize(user).status == "succeeded"
    assert memory.optimizer_state(user)["next_run_at"] == clock.now + 12 * HOUR


def test_force_runs_even_when_not_due_but_unchanged_notes_are_not_sent_again(
    memory, user, model, clock
):
    a, b, *_ = tea(memory, user)
    model(groups(), groups(tea_group(a, b)))
    assert memory.optimize(user).status == "succeeded"
    assert memory.optimize(user).status == "skipped"
    unchanged = memory.optimize(user, force=True)
    assert (unchanged.status, unchanged.applied) == ("succeeded", 0)
    assert len(scripted_model.SCRIPTS["runner-default"]) == 1, "the model was asked again"
    b = memory.update_note(user, b.id, b.version, ["Drinks"], "Likes green tea in the morning")
    assert memory.optimize(user, force=True).applied == 1


def test_unknown_model_alias_fails_with_a_clear_reason(memory, user, model, clock):
    tea(memory, user)
    model(groups())
    result = memory.optimize(user, model="gpt-unknown")
    assert result.status == "failed"
    assert 'Model alias "gpt-unknown" is not configured' in result.reason
    assert memory.optimizer_state(user)["consecutive_failures"] == 1


def test_the_alias_passed_in_picks_the_model(memory, user, model, clock):
    a, b, *_ = tea(memory, user)
    model(groups(tea_group(a, b)), alias="fast")
    assert memory.optimize(user, model="fast").applied == 1
    assert MergeRun.objects.get().model == "fast"


def test_fewer_than_two_notes_succeeds_without_asking_the_model(memory, user, model, clock):
    memory.create_notes(user, [{"categories": ["A"], "content": "only one"}])
    model()  # any call would fail: no answers
    assert memory.optimize(user).status == "succeeded"


def test_expired_lease_discards_the_late_result(memory, user, model, clock):
    a, b, *_ = tea(memory, user)

    def slow(notes):
        clock.advance(timedelta(minutes=11))  # past the 10-minute lease
        return groups(tea_group(a, b))

    model(slow)
    result = memory.optimize(user)
    assert result.status == "failed"
    assert "lease" in result.reason
    assert result.applied == 0
    assert MemoryNote.objects.filter(user=user, source="merge").count() == 0
    assert {note.id for note in memory.notes(user)} >= {a.id, b.id}
    run = MergeRun.objects.get()
    assert run.status == "failed" and "lease" in run.error
    assert memory.optimizer_state(user)["consecutive_failures"] == 1
    assert memory.optimizer_state(user)["next_run_at"] == clock.now + HOUR


def test_a_run_holding_the_lease_makes_a_second_one_skip(memory, user, model, clock):
    a, b, *_ = tea(memory, user)
    inner = []

    def meanwhile(notes):
        inner.append(memory.optimize(user, force=True))
        return groups(tea_group(a, b))

    model(meanwhile)
    outer = memory.optimize(user)
    assert inner[0].status == "skipped"
    assert outer.status == "succeeded" and outer.applied == 1


def test_a_stuck_run_counts_as_failed_once_its_lease_expired(memory, user, model, clock):
    store = memory.store
    stuck = store.claim_optimization_run(
        user.pk, model="default", now=clock.now, lease_until=clock.now + timedelta(minutes=10)
    )
    assert memory.optimize(user, force=True).status == "skipped"
    clock.advance(timedelta(minutes=10))
    model(groups())
    assert memory.optimize(user).status == "skipped"  # the stuck run failed: backing off 1 h
    assert MergeRun.objects.get(pk=stuck.id).status == "failed"
    assert memory.optimizer_state(user)["consecutive_failures"] == 1
    clock.advance(HOUR)
    assert memory.optimize(user).status == "succeeded"


def test_source_edited_while_the_model_was_thinking_skips_that_group(memory, user, model, clock):
    a, b, c, d = tea(memory, user)

    def edit_then_answer(notes):
        memory.update_note(user, b.id, b.version, ["Drinks"], "Likes green tea at 8:00")
        return groups(
            tea_group(a, b),
            {
                "ids": [c.id, d.id],
                "categories": ["Work"],
                "content": "Works at Stripe as a backend developer",
            },
        )

    model(edit_then_answer)
    result = memory.optimize(user)
    assert (result.status, result.applied, result.rejected) == ("succeeded", 1, 1)
    contents = {note.content for note in memory.notes(user)}
    assert {"Likes green tea", "Likes green tea at 8:00"} <= contents
    assert "Works at Stripe as a backend developer" in contents
    (skipped,) = MergeRun.objects.get().rejected
    assert skipped["code"] == "changed" and skipped["ids"] == [a.id, b.id]


def test_merged_text_duplicating_another_merge_of_the_same_run_is_refused(
    memory, user, model, clock
):
    notes = memory.create_notes(
        user,
        [
            {"categories": ["Drinks"], "content": "Likes tea"},
            {"categories": ["Drinks"], "content": "Likes tea a lot"},
            {"categories": ["Drinks", "Food"], "content": "Likes tea, a lot"},
            {"categories": ["Drinks", "Food"], "content": "Likes tea very much"},
        ],
    )
    same = "Likes tea a lot"
    model(
        groups(
            {"ids": [notes[0].id, notes[1].id], "categories": ["Drinks"], "content": same},
            {"ids": [notes[2].id, notes[3].id], "categories": ["Drinks"], "content": same},
        )
    )
    result = memory.optimize(user)
    assert (result.applied, result.rejected) == (1, 1)
    assert MergeRun.objects.get().rejected[0]["code"] == "duplicate"


def test_after_turn_records_activity_and_runs_through_django_q_when_due(memory, user, model, clock):
    a, b, *_ = tea(memory, user)
    model(groups(tea_group(a, b)))
    memory.after_turn(user)  # Q_CLUSTER sync=True in tests: the task runs at once
    assert MemoryNote.objects.filter(user=user, source="merge").count() == 1
    assert memory.optimizer_state(user)["last_success_at"] == clock.now
    # Not due again for 24 hours: the model is not asked (it has no answers left).
    clock.advance(HOUR)
    memory.after_turn(user)
    assert MergeRun.objects.count() == 1


def test_after_turn_with_the_optimizer_off_does_nothing(user, model, clock):
    memory = LongTermMemory(optimizer=False)
    tea(memory, user)
    model()
    memory.after_turn(user)
    assert memory.optimize(user).status == "skipped"
    assert MergeRun.objects.count() == 0


def test_after_turn_never_breaks_the_turn(memory, user, model, clock, monkeypatch):
    tea(memory, user)

    def broken(*args, **kwargs):
        raise ConnectionError("broker down")

    monkeypatch.setattr("django_q.tasks.async_task", broken)
    model()
    memory.after_turn(user)  # logged, not raised
    assert memory.store.get_optimizer_state(user.pk).last_activity_at == clock.now


def test_with_an_in_process_store_after_turn_runs_the_optimizer_inline(model, clock):
    from agent_memory.stores.in_memory import InMemoryStore

    memory = LongTermMemory(store=InMemoryStore())
    a, b, *_ = tea(memory, 7)
    model(groups(tea_group(a, b)))
    memory.after_turn(7)
    assert [note.source for note in memory.notes(7)].count("merge") == 1
    (item,) = memory.merges(7)
    assert memory.revert_merge(7, item.id)[0].version == 2


# --- merges and revert --------------------------------------------------------------------------


def merged(memory, user, model):
    a, b, *_ = tea(memory, user)
    model(groups(tea_group(a, b)))
    result = memory.optimize(user, force=True)
    assert result.applied == 1
    return result.run_id, a, b


def test_merges_lists_the_run_with_merged_and_source_notes(memory, user, model, clock):
    run_id, a, b = merged(memory, user, model)
    (item,) = memory.merges(user)
    assert item.id == run_id
    assert item.finished_at == clock.now
    (group,) = item.groups
    assert group.merged.content == "Likes green tea, especially in the morning"
    assert [source.id for source in group.sources] == [a.id, b.id]
    assert group.sources[0].as_dict() == a.as_dict()


def test_revert_restores_the_ids_with_the_next_version_and_purges_snapshots(
    memory, user, model, clock
):
    run_id, a, b = merged(memory, user, model)
    restored = memory.revert_merge(user, run_id)
    assert {(note.id, note.version) for note in restored} == {(a.id, 2), (b.id, 2)}
    assert MemoryNote.objects.filter(user=user, source="merge").count() == 0
    assert MergedNoteSnapshot.objects.count() == 0
    assert memory.merges(user) == []
    with pytest.raises(NoteNotFound):
        memory.revert_merge(user, run_id)


def test_revert_after_the_merged_note_changed_or_was_deleted_is_a_conflict(
    memory, user, model, clock
):
    run_id, *_ = merged(memory, user, model)
    note = MemoryNote.objects.get(user=user, source="merge")
    memory.update_note(user, note.pk, 1, ["Drinks"], "Likes green tea, mornings only")
    assert memory.merges(user) == []  # no longer revertable
    with pytest.raises(MergeConflict) as conflict:
        memory.revert_merge(user, run_id)
    assert conflict.value.kind == "conflict"
    memory.delete_note(user, note.pk, 2)
    with pytest.raises(MergeConflict):
        memory.revert_merge(user, run_id)


def test_revert_that_would_pass_a_limit_is_refused(memory, user, model, clock, settings):
    run_id, *_ = merged(memory, user, model)
    memory.create_notes(user, [{"categories": ["X"], "content": "one more"}])
    settings.AGENT_MEMORY = {**settings.AGENT_MEMORY, "MAX_NOTES": 4}
    with pytest.raises(LimitReached):
        memory.revert_merge(user, run_id)
    assert len(memory.notes(user)) == 4
    assert len(memory.merges(user)) == 1


def test_revert_when_an_original_was_added_again_is_a_duplicate(memory, user, model, clock):
    run_id, a, _ = merged(memory, user, model)
    memory.create_notes(user, [{"categories": ["Drinks"], "content": a.content}])
    with pytest.raises(DuplicateNote):
        memory.revert_merge(user, run_id)
    assert len(memory.merges(user)) == 1


def test_revert_of_another_persons_or_unknown_run_is_not_found(
    memory, user, other_user, model, clock
):
    run_id, *_ = merged(memory, user, model)
    for person, run in ((other_user, run_id), (user, run_id + 1000), (user, "nonsense")):
        with pytest.raises(NoteNotFound):
            memory.revert_merge(person, run)
    assert memory.merges(other_user) == []


def test_merges_past_retention_are_gone(memory, user, model, clock, settings):
    run_id, *_ = merged(memory, user, model)
    clock.advance(timedelta(days=31))
    assert memory.merges(user) == []
    with pytest.raises(NoteNotFound):
        memory.revert_merge(user, run_id)
    memory.store.purge_merge_snapshots(clock.now - timedelta(days=30))
    assert MergedNoteSnapshot.objects.count() == 0
    assert MergeRun.objects.get().proposals == {"schema": 1, "erased": True}
