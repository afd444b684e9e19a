"""The store base: a store is built only with its five note methods, the base's defaults work
on a store that has nothing else, and the merge policy a store is given is the one it follows."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from agent_memory import LongTermMemory
from agent_memory.errors import (
    LimitReached,
    MemoryStorageNotSupportedError,
    MergeConflict,
    NoteNotFound,
    StaleVersion,
)
from agent_memory.stores.base import BaseStore, MergePlan, RunOutcome
from agent_memory.stores.in_memory import InMemoryStore
from agent_memory.stores.policy import MergePolicy
from agent_memory.testing import new

from .five_methods import FiveMethodStore

T0 = datetime(2030, 1, 1, tzinfo=UTC)


def refuse(*args):
    raise LimitReached("no room")


def merged_pair(store, user=1):
    sources = store.insert_notes(user, [new("Likes tea"), new("Likes green tea")])
    run = store.claim_optimization_run(user, model="m", now=T0, lease_until=T0 + timedelta(1))
    plan = MergePlan(0, {note.id: note.version for note in sources}, new("Likes green tea"))
    merged = store.apply_merge(user, run.id, plan, now=T0)
    store.finish_optimization_run(user, run.id, RunOutcome(True), now=T0, interval=timedelta(1))
    return run, merged, sources


def test_a_store_missing_note_methods_is_refused_at_construction_naming_each():
    class OnlyListing(BaseStore):
        def list_notes(self, user_id):
            return []

    with pytest.raises(MemoryStorageNotSupportedError) as refused:
        OnlyListing()
    assert refused.value.missing == ("insert_notes", "update_note", "delete_note", "clear_notes")
    assert "insert_notes, update_note, delete_note, clear_notes" in str(refused.value)


def test_an_object_that_is_not_a_base_store_is_refused_by_the_front_door():
    class Lookalike:
        def list_notes(self, user_id):
            return []

    with pytest.raises(MemoryStorageNotSupportedError, match="insert_notes"):
        LongTermMemory(store=Lookalike())


def test_the_base_checked_writes_run_the_check_under_the_lock():
    store = FiveMethodStore()
    with pytest.raises(LimitReached):
        store.insert_notes_checked(1, [new("a")], refuse)
    (note,) = store.insert_notes_checked(1, [new("a")], lambda existing: None)
    with pytest.raises(StaleVersion):
        store.update_note_checked(1, note.id, 2, new("b"), lambda existing, current: None)
    with pytest.raises(LimitReached):
        store.update_note_checked(1, note.id, 1, new("b"), refuse)
    assert store.list_notes(1) == [note]
    assert store.history(1, note.id) == []


def test_the_base_keeps_each_version_once_and_forgets_them_with_the_note():
    store = FiveMethodStore()
    (note,) = store.insert_notes(1, [new("Likes tea")])
    store.update_note_checked(1, note.id, 1, new("Likes coffee"), lambda *args: None)
    assert [item.content for item in store.history(1, note.id)] == ["Likes tea"]
    store.delete_note(1, note.id, 2)
    with pytest.raises(NoteNotFound):
        store.history(1, note.id)


def test_a_store_without_note_steps_cannot_merge_and_the_front_door_leaves_the_optimizer_off():
    store = FiveMethodStore()
    assert not store.can_merge
    assert LongTermMemory(store=store).optimizer_options is None
    sources = store.insert_notes(1, [new("Likes tea"), new("Likes green tea")])
    run = store.claim_optimization_run(1, model="m", now=T0, lease_until=T0 + timedelta(1))
    plan = MergePlan(0, {note.id: note.version for note in sources}, new("Likes green tea"))
    with pytest.raises(MemoryStorageNotSupportedError, match="_merge_notes"):
        store.apply_merge(1, run.id, plan, now=T0)
    assert store.list_notes(1) == sources[::-1]


def test_the_checked_revert_of_the_base_checks_then_reverts():
    store = InMemoryStore()
    run, merged, sources = merged_pair(store)
    with pytest.raises(LimitReached):
        store.revert_merge_checked(1, run.id, refuse, now=T0)
    assert store.list_notes(1) == [merged]
    restored = store.revert_merge_checked(1, run.id, lambda remaining, originals: None, now=T0)
    assert sorted(note.id for note in restored) == sorted(note.id for note in sources)


def test_the_checked_revert_of_the_base_answers_conflict_before_checking():
    store = InMemoryStore()
    run, merged, _ = merged_pair(store)
    store.update_note(1, merged.id, 1, new("Likes green tea a lot"))
    with pytest.raises(MergeConflict):
        store.revert_merge_checked(1, run.id, refuse, now=T0)


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
