"""The store base: checked writes for every store, and the merge policy handed to the stores."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from agent_memory.errors import LimitReached, MergeConflict, StaleVersion
from agent_memory.optimizer.policy import MergePolicy
from agent_memory.stores.base import CHECKED_METHODS, MergePlan, RunOutcome, checked, supports
from agent_memory.stores.in_memory import InMemoryStore
from agent_memory.testing import new

T0 = datetime(2030, 1, 1, tzinfo=UTC)


class MergesWithoutCheckedWrites:
    """A store with the note and merge methods only: no checked write, no checked revert."""

    def __init__(self) -> None:
        self._inner = InMemoryStore()

    def __getattr__(self, name):
        if name.endswith("_checked"):
            raise AttributeError(name)
        return getattr(self._inner, name)


def refuse(*args):
    raise LimitReached("no room")


def merged_pair(store, user=1):
    sources = store.insert_notes(user, [new("Likes tea"), new("Likes green tea")])
    run = store.claim_optimization_run(user, model="m", now=T0, lease_until=T0 + timedelta(1))
    plan = MergePlan(0, {note.id: note.version for note in sources}, new("Likes green tea"))
    merged = store.apply_merge(user, run.id, plan, now=T0)
    store.finish_optimization_run(user, run.id, RunOutcome(True), now=T0, interval=timedelta(1))
    return run, merged, sources


def test_a_store_with_checked_writes_is_used_as_it_is():
    store = InMemoryStore()
    assert checked(store) is store


def test_a_store_without_them_gets_checked_writes_that_run_the_check():
    store = MergesWithoutCheckedWrites()
    assert not supports(store, CHECKED_METHODS)
    writes = checked(store)
    with pytest.raises(LimitReached):
        writes.insert_notes_checked(1, [new("a")], refuse)
    (note,) = writes.insert_notes_checked(1, [new("a")], lambda existing: None)
    with pytest.raises(StaleVersion):
        writes.update_note_checked(1, note.id, 2, new("b"), lambda existing, current: None)
    with pytest.raises(LimitReached):
        writes.update_note_checked(1, note.id, 1, new("b"), refuse)
    assert store.list_notes(1) == [note]


def test_the_checked_revert_of_the_base_checks_then_reverts():
    store = MergesWithoutCheckedWrites()
    run, merged, sources = merged_pair(store)
    writes = checked(store)
    with pytest.raises(LimitReached):
        writes.revert_merge_checked(1, run.id, refuse, now=T0)
    assert store.list_notes(1) == [merged]
    restored = writes.revert_merge_checked(1, run.id, lambda remaining, originals: None, now=T0)
    assert sorted(note.id for note in restored) == sorted(note.id for note in sources)


def test_the_checked_revert_of_the_base_answers_conflict_before_checking():
    store = MergesWithoutCheckedWrites()
    run, merged, _ = merged_pair(store)
    store.update_note(1, merged.id, 1, new("Likes green tea a lot"))
    with pytest.raises(MergeConflict):
        checked(store).revert_merge_checked(1, run.id, refuse, now=T0)


class AlwaysDue(MergePolicy):
    def is_due(self, state, now):
        return True


def test_a_store_follows_the_policy_it_is_given():
    usual, eager = InMemoryStore(), InMemoryStore(policy=AlwaysDue())
    for store in (usual, eager):
        merged_pair(store)
        assert store.get_optimizer_state(1).next_run_at == T0 + timedelta(days=1)
    claim = {"model": "m", "now": T0, "lease_until": T0 + timedelta(1)}
    assert usual.claim_optimization_run(1, **claim) is None
    assert eager.claim_optimization_run(1, **claim) is not None
