"""Migrations that change what is already stored: run from the migration before, on rows written
as the earlier code wrote them."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from agent_memory import LongTermMemory
from agent_memory.models import MemoryNoteVersion
from agent_memory.stores.orm import DjangoStore

BEFORE_SLOTS = [("agent_memory", "0013_update_note_returns_what_it_keeps")]


def _migrated(target: list[tuple[str, str]] | None = None) -> MigrationExecutor:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(target or executor.loader.graph.leaf_nodes())
    return executor


@pytest.mark.django_db(transaction=True)
def test_kept_versions_get_their_slots_and_the_newer_of_two_in_one_stays(make_user):
    ann = make_user()
    memory = LongTermMemory(store=DjangoStore(), optimizer=False)
    (note,) = memory.create_notes(ann, [{"categories": ["Food"], "content": "Version 13"}])
    (odd,) = memory.create_notes(ann, [{"categories": ["Food"], "content": "Likes tea"}])
    apps = _migrated(BEFORE_SLOTS).loader.project_state(BEFORE_SLOTS).apps
    earlier = apps.get_model("agent_memory", "MemoryNoteVersion")
    now = timezone.now()

    def kept(note_id: int, version: int) -> object:
        return earlier(
            note_id=note_id,
            user_id=ann.pk,
            version=version,
            categories=["Food"],
            content=f"Version {version}",
            source="agent",
            changed_at=now,
        )

    # As the earlier code kept them: the last ten of a note; and two ten versions apart, which
    # it never kept together, so they would share a slot.
    earlier.objects.bulk_create(
        [kept(note.id, version) for version in range(3, 13)] + [kept(odd.id, 1), kept(odd.id, 11)]
    )
    apps.get_model("agent_memory", "MemoryNote").objects.filter(pk=note.id).update(version=13)

    _migrated()

    rows = MemoryNoteVersion.objects.filter(note_id=note.id).values_list("slot", "version")
    assert sorted(rows) == sorted((version % 10, version) for version in range(3, 13))
    assert list(MemoryNoteVersion.objects.filter(note_id=odd.id).values_list("version")) == [(11,)]
    # The writes of every day go on from there: version 13 kept in slot 3, over version 3.
    memory.update_note(ann, note.id, 13, ["Food"], "Version 14")
    assert [item.version for item in memory.history(ann, note.key)] == list(range(13, 3, -1))
    assert MemoryNoteVersion.objects.filter(note_id=note.id).count() == 10


@pytest.mark.django_db(transaction=True)
def test_the_slots_can_be_unapplied_and_applied_again(make_user):
    ann = make_user()
    memory = LongTermMemory(store=DjangoStore(), optimizer=False)
    (note,) = memory.create_notes(ann, [{"categories": ["Food"], "content": "Likes tea"}])
    memory.update_note(ann, note.id, 1, ["Food"], "Likes green tea")
    _migrated(BEFORE_SLOTS)
    _migrated()
    memory.update_note(ann, note.id, 2, ["Food"], "Likes white tea")
    assert [item.content for item in memory.history(ann, note.key)] == [
        "Likes green tea",
        "Likes tea",
    ]
