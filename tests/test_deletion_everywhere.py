"""Deletion reaches every copy: after each kind of delete, a scan of every text and
JSON column of the database (the app's, admin's, django-q2's and the example chat's tables)
finds the deleted words nowhere."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection
from django.utils import timezone
from rest_framework.test import APIClient

from agent_memory import LongTermMemory
from agent_memory.models import MemoryNote, MergedNoteSnapshot, MergeRun
from agent_memory.notes import NewNote
from agent_memory.optimizer import runner
from agent_memory.stores.base import MergePlan, RunOutcome
from agent_memory.stores.in_memory import InMemoryStore
from agent_memory.stores.policy import forget_in_run

pytestmark = pytest.mark.django_db

#: Unique words: two in the originals of a merge, one in the merged note, one in a bystander.
ORIGINAL_WORDS = ("quintalux", "zorblaxine")
MERGED_WORD = "wexmirelle"
BYSTANDER_WORD = "bibliovex"
TEXT_TYPES = {"CharField", "TextField", "JSONField", "SlugField", "EmailField", "URLField"}


def copies_of(word: str) -> list[str]:
    """``table.column`` of every row holding ``word`` in any table of the database: this app's,
    admin's, django-q2's and the example project's (text and JSON columns, compared as text,
    ignoring case)."""
    found = []
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        for config in apps.get_app_configs():
            for model in config.get_models():
                for field in model._meta.concrete_fields:
                    if field.get_internal_type() not in TEXT_TYPES:
                        continue
                    cursor.execute(
                        f"SELECT COUNT(*) FROM {quote(model._meta.db_table)} "
                        f"WHERE LOWER(CAST({quote(field.column)} AS TEXT)) LIKE %s",
                        [f"%{word.lower()}%"],
                    )
                    if cursor.fetchone()[0]:
                        found.append(f"{model._meta.db_table}.{field.column}")
    return found


def seed(person):
    """A person whose notes were merged (snapshot, proposals, a rejection quoting a note) and
    whose next run's unparsable answer was kept raw. Returns the memory, merged note, bystander."""
    memory = LongTermMemory()
    store = memory.store
    first, second, bystander = memory.create_notes(
        person,
        [
            {"categories": ["Pets"], "content": "Has an axolotl called quintalux."},
            {"categories": ["Pets"], "content": "Feeds the axolotl zorblaxine pellets."},
            {"categories": ["Work"], "content": "Works as a bibliovex librarian."},
        ],
    )
    at = runner.now()
    lease = at + timedelta(minutes=10)
    run = store.claim_optimization_run(person.pk, model="default", now=at, lease_until=lease)
    content = f"Keeps an axolotl named {MERGED_WORD} and feeds it."
    merged = store.apply_merge(
        person.pk,
        run.id,
        MergePlan(0, {first.id: 1, second.id: 1}, NewNote(("Pets",), content, "merge")),
        now=at,
    )
    proposals = {
        "schema": 1,
        "model": "default",
        "notes": [first.id, second.id, bystander.id],
        "groups": [
            {"ids": [first.key, second.key], "categories": ["Pets"], "content": content},
            {
                "ids": [first.key, bystander.key],
                "categories": ["Pets"],
                "content": "Has quintalux; bibliovex librarian.",
            },
        ],
    }
    rejected = [
        {"index": 1, "ids": [first.id, bystander.id], "code": "lost", "reason": "'bibliovex'…"}
    ]
    store.finish_optimization_run(
        person.pk,
        run.id,
        RunOutcome(True, proposals=proposals, rejected=rejected),
        now=at,
        interval=timedelta(hours=24),
    )
    run = store.claim_optimization_run(
        person.pk, model="default", now=at, lease_until=lease, force=True
    )
    raw = {
        "schema": 1,
        "notes": [merged.id, bystander.id],
        "raw": f"Maybe {MERGED_WORD} and the bibliovex one? Not sure.",
    }
    store.finish_optimization_run(
        person.pk,
        run.id,
        RunOutcome(False, proposals=raw, error="No JSON."),
        now=at,
        interval=timedelta(hours=24),
    )
    for word in (*ORIGINAL_WORDS, MERGED_WORD, BYSTANDER_WORD):
        assert copies_of(word), f"the seed keeps no copy of {word!r}"
    return memory, merged, bystander


@pytest.fixture
def person(make_user):
    return make_user()


def admin_client():
    staff = get_user_model().objects.create_superuser("ops", "ops@example.com", "pw-for-tests")
    client = APIClient()
    client.force_login(staff)
    return client


def delete_by(kind: str, memory, person, note) -> None:
    if kind == "tool":
        answer = memory.call_tool(
            person, {"action": "delete", "id": note.key, "version": note.version}
        )
        assert answer == {"deleted": note.id}
    elif kind == "api":
        client = APIClient()
        client.force_login(person)
        response = client.delete(f"/api/chat/memory/{note.id}?version={note.version}")
        assert response.status_code == 204
    elif kind == "screen":
        client = APIClient()
        client.force_login(person)
        response = client.post(f"/memory/notes/{note.id}/delete", {"version": note.version})
        assert response.status_code in (200, 302)
    elif kind == "admin":
        response = admin_client().post(
            f"/admin/agent_memory/memorynote/{note.id}/delete/", {"post": "yes"}
        )
        assert response.status_code == 302
    elif kind == "erase":
        assert memory.clear(person) >= 1
    elif kind == "expiry":  # its valid_until passes, then the sweep deletes it
        MemoryNote.objects.filter(pk=note.id).update(valid_until=timezone.now())
        assert runner.purge_expired_notes(memory.store) == 1
    else:  # a merge applying deletes the note as one of its sources
        store, at = memory.store, runner.now()
        others = [item for item in memory.notes(person) if item.id != note.id]
        run = store.claim_optimization_run(
            person.pk, model="default", now=at, lease_until=at + timedelta(minutes=5), force=True
        )
        sources = {note.id: note.version, others[0].id: others[0].version}
        text = f"{note.content} {others[0].content}"
        store.apply_merge(
            person.pk, run.id, MergePlan(0, sources, NewNote(("Pets",), text)), now=at
        )
    assert note.id not in {item.id for item in memory.notes(person)}


@pytest.mark.parametrize("kind", ["tool", "api", "screen", "admin", "erase", "expiry"])
def test_deleting_a_merged_note_leaves_no_copy_of_it_or_its_originals(kind, person):
    memory, merged, _ = seed(person)

    delete_by(kind, memory, person, merged)

    for word in (*ORIGINAL_WORDS, MERGED_WORD):
        assert copies_of(word) == [], word


def test_a_merge_applying_forgets_the_originals_of_the_merged_note_it_deletes(person):
    memory, merged, _ = seed(person)

    delete_by("merge", memory, person, merged)

    # The merged note's own text lives on in the new merge (and its snapshot, to revert it);
    # the originals it was made from can no longer come back, so they are gone.
    for word in ORIGINAL_WORDS:
        assert copies_of(word) == [], word


@pytest.mark.parametrize("kind", ["tool", "api", "screen", "admin", "expiry"])
def test_deleting_a_note_named_in_a_rejected_merge_removes_it_from_reasons(kind, person):
    memory, _, bystander = seed(person)

    delete_by(kind, memory, person, bystander)

    assert copies_of(BYSTANDER_WORD) == []
    run = MergeRun.objects.filter(user=person).order_by("pk").first()
    assert run.rejected[0]["reason"] == f"[deleted note memory:{bystander.id}]"
    assert run.proposals["groups"][1]["content"].startswith("[deleted note memory:")


def test_after_deleting_the_merged_note_revert_still_answers_conflict(person):
    memory, merged, _ = seed(person)
    run_id = MergedNoteSnapshot.objects.get(user=person).run_id
    memory.delete_note(person, merged.id, merged.version)

    with pytest.raises(Exception) as raised:
        memory.revert_merge(person, run_id)

    assert getattr(raised.value, "kind", None) == "conflict"


def test_memory_optimize_purges_snapshots_past_the_retention(person, monkeypatch):
    seed(person)
    call_command("memory_optimize")
    assert MergedNoteSnapshot.objects.filter(user=person).count() == 1

    later = runner.now() + timedelta(days=31)
    monkeypatch.setattr(runner, "now", lambda: later)
    call_command("memory_optimize")

    assert MergedNoteSnapshot.objects.filter(user=person).count() == 0
    for word in ORIGINAL_WORDS:
        assert copies_of(word) == [], word
    for run in MergeRun.objects.filter(user=person):
        assert run.proposals == {"schema": 1, "erased": True}
        assert all("reason" not in item for item in run.rejected)


def test_in_memory_store_forgets_a_deleted_note_everywhere_too():
    store = InMemoryStore()
    memory = LongTermMemory(store=store)
    first, second, third = memory.create_notes(
        1,
        [
            {"categories": ["Pets"], "content": "Has an axolotl called quintalux."},
            {"categories": ["Pets"], "content": "Feeds the axolotl zorblaxine pellets."},
            {"categories": ["Work"], "content": "Works as a bibliovex librarian."},
        ],
    )
    at = runner.now()
    run = store.claim_optimization_run(1, model="m", now=at, lease_until=at + timedelta(hours=1))
    merged = store.apply_merge(
        1,
        run.id,
        MergePlan(0, {first.id: 1, second.id: 1}, NewNote(("Pets",), "Keeps wexmirelle.")),
        now=at,
    )
    proposals = {"notes": [first.id, second.id, third.id], "groups": [], "raw": "quintalux?"}
    rejected = [{"ids": [first.id, third.id], "reason": "bibliovex and quintalux"}]
    store.finish_optimization_run(
        1,
        run.id,
        RunOutcome(False, proposals=proposals, rejected=rejected),
        now=at,
        interval=timedelta(hours=1),
    )

    memory.delete_note(1, merged.id, merged.version)
    memory.delete_note(1, third.id, third.version)

    kept = repr((store._runs, store._snapshots)).casefold()
    for word in (*ORIGINAL_WORDS, MERGED_WORD, BYSTANDER_WORD):
        assert word not in kept, word


def test_forgetting_leaves_other_texts_alone_and_names_only_the_key():
    proposals = {
        "groups": [
            {"ids": ["memory:3", "memory:4"], "categories": ["A"], "content": "Keep me."},
            {"ids": ["memory:5", "memory:6"], "categories": ["B"], "content": "Lives in Porto."},
        ]
    }
    rejected = [{"ids": [5, 6], "reason": "Porto is missing"}, {"ids": [3], "reason": "fine"}]

    after, reasons = forget_in_run(proposals, rejected, {5: "Lives in Porto."})

    assert after["groups"][0]["content"] == "Keep me."
    assert after["groups"][1] == {
        "ids": ["memory:5", "memory:6"],
        "categories": [],
        "content": "[deleted note memory:5]",
    }
    assert reasons == [
        {"ids": [5, 6], "reason": "[deleted note memory:5]"},
        {"ids": [3], "reason": "fine"},
    ]
