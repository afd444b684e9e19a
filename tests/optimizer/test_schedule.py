"""The django-q2 schedule (created from post_migrate, once) and a sweep through django-q2 in sync
mode, end to end with a scripted model; and ``manage.py memory_optimize``."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.core.cache import cache
from django.core.management import call_command
from django.core.management.sql import emit_post_migrate_signal
from django.utils import timezone
from django_q.models import Schedule, Task
from django_q.scheduler import scheduler

from agent_memory import LongTermMemory
from agent_memory.models import MemoryNote, MergeRun
from agent_memory.optimizer.queue import SCHEDULE_NAME, ensure_schedule
from tests import scripted_model
from tests.scripted_model import groups

pytestmark = pytest.mark.django_db


def test_the_schedule_exists_once_after_repeated_migrate():
    assert Schedule.objects.filter(name=SCHEDULE_NAME).count() == 1  # from the test DB's migrate
    call_command("migrate", verbosity=0)
    call_command("migrate", verbosity=0)
    emit_post_migrate_signal(verbosity=0, interactive=False, db="default")
    (schedule,) = Schedule.objects.filter(name=SCHEDULE_NAME)
    assert schedule.func == "agent_memory.tasks.sweep"
    assert (schedule.schedule_type, schedule.minutes, schedule.repeats) == (
        Schedule.MINUTES,
        15,
        -1,
    )


def test_the_schedule_follows_sweep_minutes_and_goes_when_the_optimizer_is_off(settings):
    settings.AGENT_MEMORY = {"OPTIMIZER": {"sweep_minutes": 5}}
    ensure_schedule(using="default")
    assert Schedule.objects.get(name=SCHEDULE_NAME).minutes == 5
    settings.AGENT_MEMORY = {"OPTIMIZER": False}
    ensure_schedule(using="default")
    assert not Schedule.objects.filter(name=SCHEDULE_NAME).exists()


def people_with_duplicates(make_user, count):
    memory = LongTermMemory()
    people = []
    for _ in range(count):
        person = make_user()
        a, b = memory.create_notes(
            person,
            [
                {"categories": ["Drinks"], "content": "Likes green tea"},
                {"categories": ["Drinks"], "content": "Likes green tea in the morning"},
            ],
        )
        people.append((person, a, b))
    return memory, people


def merge_answer(notes):
    ids = [note["id"] for note in notes]
    return groups(
        {
            "ids": ids,
            "categories": ["Drinks"],
            "content": "Likes green tea, especially in the morning",
        }
    )


def test_a_sweep_through_django_q_merges_the_notes_of_people_who_are_due(make_user, settings):
    memory, people = people_with_duplicates(make_user, 3)
    active, also_active, idle = (person for person, *_ in people)
    settings.AGENT_MEMORY = {
        "MODELS": {"chat": scripted_model.configure("sweep", merge_answer, merge_answer)}
    }
    for person in (active, also_active):
        memory.store.record_optimizer_activity(person.pk, at=timezone.now(), model="chat")
    Schedule.objects.filter(name=SCHEDULE_NAME).update(
        next_run=timezone.now() - timedelta(minutes=1)
    )

    scheduler()  # what a cluster does every 30 s; sync=True runs the tasks right here

    merged = MemoryNote.objects.filter(source="merge")
    assert sorted(merged.values_list("user_id", flat=True)) == sorted([active.pk, also_active.pk])
    assert not MemoryNote.objects.filter(user=idle, source="merge").exists()
    assert set(MergeRun.objects.values_list("status", "model")) == {("succeeded", "chat")}
    assert Task.objects.filter(func="agent_memory.tasks.sweep", success=True).exists()
    # Both due people in one queued batch, run one after the other.
    (batch,) = Task.objects.filter(func="agent_memory.tasks.optimize_people")
    assert batch.result == ["succeeded", "succeeded"]
    # Nobody is due any more: a second sweep enqueues nothing.
    from agent_memory.tasks import sweep

    assert sweep() == 0


def test_memory_optimize_command_runs_the_given_person(make_user, settings):
    _, [(person, *_), (other, *_)] = people_with_duplicates(make_user, 2)
    settings.AGENT_MEMORY = {"MODELS": {"default": scripted_model.configure("cmd", merge_answer)}}
    out = StringIO()
    call_command("memory_optimize", "--user", person.username, stdout=out)
    assert f"person {person.pk}: succeeded (1 applied, 0 rejected)" in out.getvalue()
    assert MemoryNote.objects.filter(user=person, source="merge").count() == 1
    assert not MemoryNote.objects.filter(user=other, source="merge").exists()
    out = StringIO()
    call_command("memory_optimize", "--user", str(person.pk), stdout=out)
    assert "skipped" in out.getvalue()


def test_memory_optimize_without_user_runs_those_who_are_due(make_user, settings):
    memory, [(person, *_)] = people_with_duplicates(make_user, 1)
    settings.AGENT_MEMORY = {"MODELS": {"fast": scripted_model.configure("cmd2", merge_answer)}}
    out = StringIO()
    call_command("memory_optimize", stdout=out)
    assert "Nobody is due." in out.getvalue()
    memory.store.record_optimizer_activity(person.pk, at=timezone.now(), model="fast")
    call_command("memory_optimize", stdout=out)
    assert MergeRun.objects.get().model == "fast"
    assert MemoryNote.objects.filter(user=person, source="merge").count() == 1


def test_the_sweep_purges_snapshots_past_retention(make_user, settings):
    from agent_memory.models import MergedNoteSnapshot
    from agent_memory.tasks import sweep

    memory, [(person, *_)] = people_with_duplicates(make_user, 1)
    settings.AGENT_MEMORY = {"MODELS": {"default": scripted_model.configure("purge", merge_answer)}}
    assert memory.optimize(person).applied == 1
    MergedNoteSnapshot.objects.update(created_at=timezone.now() - timedelta(days=31))
    MergeRun.objects.update(finished_at=timezone.now() - timedelta(days=31))
    cache.clear()  # no purge in the last hour (the throttle's timestamp lives in the cache)

    sweep()

    assert not MergedNoteSnapshot.objects.exists()
    assert MergeRun.objects.get().proposals == {"schema": 1, "erased": True}
    assert memory.merges(person) == []


def test_the_sweep_runs_a_person_with_the_settings_not_the_options_given_in_code(
    make_user, settings, monkeypatch
):
    from agent_memory.tasks import sweep

    _, [(person, *_)] = people_with_duplicates(make_user, 1)
    settings.AGENT_MEMORY = {
        "MODELS": {"chat": scripted_model.configure("opts", merge_answer)},
        "OPTIMIZER": {"lease_minutes": 3, "interval_hours": 2},
    }
    queued = []
    monkeypatch.setattr("django_q.tasks.async_task", lambda *a, **k: queued.append(a))
    # The person's turn came through a memory given other options in code: they stay its own.
    in_code = LongTermMemory(optimizer={"lease_minutes": 7, "interval_hours": 9})
    in_code.after_turn(person, model="chat")
    assert queued == [("agent_memory.tasks.optimize_people", [[person.pk, "chat"]], "default")]
    monkeypatch.undo()

    assert sweep() == 1

    run = MergeRun.objects.get(user=person)
    assert run.lease_expires_at - run.started_at == timedelta(minutes=3)
    state = in_code.store.get_optimizer_state(person.pk)
    assert state.next_run_at - run.finished_at == timedelta(hours=2)


def test_memory_optimize_runs_with_the_settings_options(make_user, settings):
    _, [(person, *_)] = people_with_duplicates(make_user, 1)
    settings.AGENT_MEMORY = {
        "MODELS": {"default": scripted_model.configure("cmd-opts", merge_answer)},
        "OPTIMIZER": {"lease_minutes": 4, "interval_hours": 3},
    }
    call_command("memory_optimize", "--user", str(person.pk), "--force", stdout=StringIO())
    run = MergeRun.objects.get(user=person)
    assert (run.status, run.lease_expires_at - run.started_at) == (
        "succeeded",
        timedelta(minutes=4),
    )
    state = LongTermMemory().optimizer_state(person)
    assert state["next_run_at"] - run.finished_at == timedelta(hours=3)


@pytest.mark.django_db(transaction=True)
def test_the_migration_points_an_existing_schedule_at_the_tasks_new_path():
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connection)
    before = [("agent_memory", "0007_sweep_indexes")]
    executor.migrate(before)
    Schedule.objects.filter(name=SCHEDULE_NAME).update(func="agent_memory.optimizer.tasks.sweep")
    unrelated = Schedule.objects.create(name="mine", func="myproject.tasks.report")

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())

    assert Schedule.objects.get(name=SCHEDULE_NAME).func == "agent_memory.tasks.sweep"
    assert Schedule.objects.get(pk=unrelated.pk).func == "myproject.tasks.report"
