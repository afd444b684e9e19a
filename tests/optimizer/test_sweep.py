"""The sweep at a constant cost per batch: one indexed due query of two columns, one queued task
per hundred due people, a batch that survives any one person's failure, and purges that run at
most hourly on their own indexes."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from agent_memory import LongTermMemory, tasks
from agent_memory.models import ERASED_RUN_PROPOSALS, MergedNoteSnapshot, MergeRun
from agent_memory.optimizer import runner
from agent_memory.stores import policy
from agent_memory.stores.in_memory import InMemoryStore
from agent_memory.stores.orm import DjangoStore

pytestmark = pytest.mark.django_db


def due_people(count: int, *, start: int = 0) -> list[int]:
    """``count`` people active since their last success (so due), by primary key."""
    users = get_user_model().objects.bulk_create(
        get_user_model()(username=f"due{start + number}") for number in range(count)
    )
    store = DjangoStore()
    at = timezone.now() - timedelta(minutes=5)
    for user in users:
        store.record_optimizer_activity(user.pk, at=at, model="chat")
    return sorted(user.pk for user in users)


@pytest.fixture
def queued(monkeypatch, settings):
    """What the sweep hands django-q2: ``(func, args)`` per queued task (nothing runs)."""
    settings.AGENT_MEMORY = {"OPTIMIZER": {}}
    calls: list[tuple[str, tuple]] = []
    monkeypatch.setattr(
        "django_q.tasks.async_task", lambda func, *args, **kwargs: calls.append((func, args))
    )
    cache.clear()
    return calls


def test_the_sweep_queues_one_task_per_hundred_due_people_in_order(queued):
    ids = due_people(250)

    assert tasks.sweep() == 250

    assert [func for func, _ in queued] == [tasks.BATCH_FUNC] * 3
    batches = [args[0] for _, args in queued]
    assert [len(batch) for batch in batches] == [100, 100, 50]
    assert [user_id for batch in batches for user_id, _ in batch] == ids
    assert {model for batch in batches for _, model in batch} == {"chat"}


def test_the_sweeps_queries_do_not_grow_with_the_number_of_due_people(queued):
    due_people(3)
    runner.purge_expired(DjangoStore(), force=True)  # the purge is not part of what is compared
    with CaptureQueriesContext(connection) as few:
        assert tasks.sweep() == 3
    due_people(90, start=3)
    with CaptureQueriesContext(connection) as many:
        assert tasks.sweep() == 93
    assert len(many.captured_queries) == len(few.captured_queries)
    (due,) = [query["sql"] for query in many.captured_queries if "optimizerstate" in query["sql"]]
    # Two columns, not a model instance with every field per row.
    selected = due.split(" FROM ")[0]
    assert "user_id" in selected and "model" in selected and "notes_fingerprint" not in selected


def test_a_batch_goes_on_after_a_person_whose_run_raises(make_user, monkeypatch, caplog):
    first, broken, last = (make_user().pk for _ in range(3))
    ran = []

    def optimize(self, user_id, model="default", force=False):
        ran.append((user_id, model))
        if user_id == broken:
            raise RecursionError("a model answer nested too deep")
        return runner.OptimizationResult(1, "succeeded")

    monkeypatch.setattr(LongTermMemory, "optimize", optimize)

    statuses = tasks.optimize_people([[first, "chat"], [broken, "chat"], [last, "fast"]])

    assert statuses == ["succeeded", "failed", "succeeded"]
    assert ran == [(first, "chat"), (broken, "chat"), (last, "fast")]
    assert f"Memory optimizer for person {broken} failed" in caplog.text


class CountingStore(InMemoryStore):
    def __init__(self) -> None:
        super().__init__()
        self.purges: list = []

    def purge_merge_snapshots(self, before):
        self.purges.append(before)
        return 0


def test_the_retention_purge_runs_at_most_once_an_hour(monkeypatch):
    store = CountingStore()
    cache.clear()
    at = timezone.now()
    monkeypatch.setattr(runner, "now", lambda: at)
    runner.purge_expired(store)
    runner.purge_expired(store)
    monkeypatch.setattr(runner, "now", lambda: at + timedelta(minutes=59))
    runner.purge_expired(store)
    assert len(store.purges) == 1
    monkeypatch.setattr(runner, "now", lambda: at + timedelta(minutes=61))
    runner.purge_expired(store)
    runner.purge_expired(store, force=True)
    assert len(store.purges) == 3
    # The cutoff is the retention before the moment of the purge.
    assert store.purges[1] == at + timedelta(minutes=61) - timedelta(days=30)


def test_the_sweep_does_not_purge_again_within_the_hour(make_user, queued):
    person = make_user()
    run = MergeRun.objects.create(
        user=person,
        status="succeeded",
        lease_expires_at=timezone.now(),
        finished_at=timezone.now() - timedelta(days=31),
        proposals={"schema": 1, "groups": [{"content": "secret words"}]},
    )
    tasks.sweep()
    run.refresh_from_db()
    assert run.proposals == ERASED_RUN_PROPOSALS
    MergedNoteSnapshot.objects.create(
        run=run,
        user=person,
        group_index=0,
        merged_note_id=1,
        merged_version=1,
        sources={},
        created_at=timezone.now() - timedelta(days=31),
    )
    tasks.sweep()
    assert MergedNoteSnapshot.objects.count() == 1  # purged at the next hour's sweep
    cache.clear()
    tasks.sweep()
    assert MergedNoteSnapshot.objects.count() == 0


def test_the_index_leaves_out_erased_runs_as_the_policy_erases_them():
    assert ERASED_RUN_PROPOSALS == policy.ERASED_PROPOSALS


def _plan(sql: str, params) -> str:
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(f"EXPLAIN {sql}", params)
        return "\n".join(line for (line,) in cursor.fetchall())


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's planner")
def test_postgresql_can_answer_the_due_query_and_the_purges_from_their_indexes():
    store = DjangoStore()
    with CaptureQueriesContext(connection) as captured:
        store.due_optimizer_users(timezone.now())
    (due,) = captured.captured_queries
    assert "agent_memory_state_wanted" in _plan(due["sql"], None)
    cutoff = timezone.now() - timedelta(days=30)
    snapshots = MergedNoteSnapshot.objects.filter(created_at__lt=cutoff).values("pk")
    assert "agent_memory_snapshot_age" in _plan(*snapshots.query.sql_with_params())
    runs = MergeRun.objects.exclude(proposals=ERASED_RUN_PROPOSALS).filter(finished_at__lt=cutoff)
    assert "agent_memory_run_unerased" in _plan(*runs.query.sql_with_params())
