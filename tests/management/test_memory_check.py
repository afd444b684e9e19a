"""The counts the limits are checked against: kept true by every write, filled for old data by the
migration, and recounted (reported, repaired) by ``manage.py memory_check``."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import override_settings

from agent_memory import LongTermMemory
from agent_memory.errors import DuplicateNote, LimitReached
from agent_memory.locking import Tally, stored_tally
from agent_memory.models import MemoryNote, MemoryUserLock, NoteVector
from agent_memory.rules import text_digest
from agent_memory.stores.orm import DjangoStore


def check(*args: str) -> str:
    out = StringIO()
    call_command("memory_check", *args, stdout=out)
    return out.getvalue()


def counts(user) -> Tally | None:
    return stored_tally(user.pk, "default")


def note(categories, content):
    return {"categories": categories, "content": content}


@pytest.fixture
def memory() -> LongTermMemory:
    return LongTermMemory(optimizer=False)


@pytest.mark.django_db
def test_every_kind_of_write_keeps_the_counts_true(user, memory):
    tea, jazz = memory.create_notes(user, [note(["Food"], "Likes tea"), note(["Music"], "Jazz")])
    assert counts(user) == Tally(2, 13)
    tea = memory.update_note(user, tea.id, tea.version, ["Food"], "Likes green tea")
    assert counts(user) == Tally(2, 19)
    memory.delete_note(user, jazz.id, jazz.version)
    assert counts(user) == Tally(1, 15)
    with pytest.raises(DuplicateNote):
        memory.create_notes(user, [note(["Food"], "likes GREEN  tea")])
    assert counts(user) == Tally(1, 15), "a refused write must not count"
    memory.clear(user)
    assert counts(user) == Tally(0, 0)
    assert "0 with drifted counts" in check()


@pytest.mark.django_db
def test_drift_from_writes_around_the_app_is_reported_then_repaired(user, other_user, memory):
    memory.create_notes(user, [note(["Food"], "Likes tea"), note(["Music"], "Likes jazz")])
    memory.create_notes(other_user, [note(["Food"], "Likes coffee")])
    # Written around the app: a raw insert, a raw text change (its text key is now stale).
    MemoryNote.objects.create(user=user, categories=["Travel"], content="Flies to Oslo")
    MemoryNote.objects.filter(user=user, content="Likes tea").update(content="Likes black tea")

    with pytest.raises(CommandError, match="memory_check --repair"):
        check()
    assert counts(user) == Tally(2, 19), "a check without --repair changes nothing"

    out = check("--repair")
    assert f"person {user.pk}: stored 2 notes, 19 characters; counted 3 notes, 38 characters" in out
    assert "1 stale text key(s) (repaired)" in out
    assert f"person {other_user.pk}:" not in out
    assert "Checked 2 people: 1 with drifted counts, repaired." in out
    assert counts(user) == Tally(3, 38)
    assert all(row.text_key == text_digest(row.content) for row in MemoryNote.objects.all())
    assert "0 with drifted counts" in check()
    # The repaired key finds the changed text again.
    with pytest.raises(DuplicateNote):
        memory.create_notes(user, [note(["Food"], "likes black tea")])


@pytest.mark.django_db
def test_limits_use_the_counts_and_their_figures(user, memory):
    memory.create_notes(user, [note(["Food"], "Likes tea"), note(["Music"], "Likes jazz")])
    with override_settings(AGENT_MEMORY={"MAX_NOTES": 3, "MAX_TOTAL_CHARS": 30}):
        with pytest.raises(LimitReached, match="19 of 30 characters"):
            memory.create_notes(user, [note(["Art"], "Paints watercolours")])
        memory.create_notes(user, [note(["Art"], "Paints")])
        with pytest.raises(LimitReached, match="3 of 3 notes"):
            memory.create_notes(user, [note(["Art"], "Sings")])


@pytest.mark.django_db
def test_a_person_without_a_counts_row_is_counted_from_their_notes(user, memory):
    MemoryNote.objects.create(user=user, categories=["Food"], content="Likes tea")
    assert counts(user) is None
    memory.create_notes(user, [note(["Music"], "Likes jazz")])
    assert counts(user) == Tally(2, 19)
    assert "0 with drifted counts" in check("--user", str(user.pk))


@pytest.mark.django_db
def test_check_of_an_unknown_person_says_what_to_give():
    with pytest.raises(CommandError, match="primary key or a username"):
        check("--user", "nobody-like-this")


@pytest.mark.django_db
def test_a_person_is_named_by_username_or_by_their_key_whatever_its_type(make_user):
    """On the UUID-keyed people of ``tests.settings_uuid_people`` too: the key as spelt."""
    ann = make_user("ann")
    assert "Checked 1 people" in check("--user", "ann")
    assert "Checked 1 people" in check("--user", str(ann.pk))
    # Nothing that only looks like a key: digits of another script, a key of another type.
    for spelling in ("²", "12ab", "00000000-0000-0000-0000-000000000000", "9" * 30):
        with pytest.raises(CommandError, match="primary key or a username"):
            check("--user", spelling)


@pytest.mark.django_db(transaction=True)
def test_the_migration_fills_counts_and_text_keys_of_existing_notes(make_user):
    ann, bob = make_user(), make_user()
    executor = MigrationExecutor(connection)
    before = ("agent_memory", "0002_optimizer")
    executor.migrate([before])
    old = executor.loader.project_state([before]).apps
    notes = old.get_model("agent_memory", "MemoryNote").objects
    notes.create(user_id=ann.pk, categories=["Food"], content="Likes  TEA")
    notes.create(user_id=ann.pk, categories=["Music"], content="Likes jazz")
    notes.create(user_id=bob.pk, categories=["Food"], content="Likes coffee")

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())

    rows = dict(MemoryUserLock.objects.values_list("user_id", "note_count"))
    assert rows == {ann.pk: 2, bob.pk: 1}
    assert counts(ann) == Tally(2, 20) and counts(bob) == Tally(1, 12)
    assert all(row.text_key == text_digest(row.content) for row in MemoryNote.objects.all())
    with pytest.raises(DuplicateNote):
        LongTermMemory(optimizer=False).create_notes(ann, [note(["Food"], "likes tea")])
    assert DjangoStore().check_counts(ann.pk).drifted is False


@pytest.mark.django_db(transaction=True)
def test_writes_outside_any_transaction_commit_whole_or_roll_back_whole(make_user, settings):
    """No atomic block around the write (as in a request): on PostgreSQL its batch begins the
    transaction itself. The first write creates the person's count row; a refused write leaves
    no note, no vector change and the counts as they were."""
    from .. import fake_embeddings

    settings.AGENT_MEMORY = {"EMBEDDINGS": fake_embeddings.config()}
    ann = make_user()
    memory = LongTermMemory(store=DjangoStore(), optimizer=False)
    assert not connection.in_atomic_block
    (tea,) = memory.create_notes(ann, [note(["Food"], "Likes green tea")])
    assert counts(ann) == Tally(1, len("Likes green tea"))
    before = (counts(ann), list(MemoryNote.objects.values_list("pk", "version", "content")))
    assert not NoteVector.objects.exists(), "a write embeds nothing; the first search does"
    memory.search(ann, "tea")
    vectors = dict(NoteVector.objects.values_list("note_id", "digest"))
    assert list(vectors) == [tea.id]

    with pytest.raises(DuplicateNote):
        memory.create_notes(ann, [note(["Misc"], "Likes jazz"), note(["Food"], "likes GREEN tea")])
    with override_settings(AGENT_MEMORY={**settings.AGENT_MEMORY, "MAX_TOTAL_CHARS": 20}):
        with pytest.raises(LimitReached):
            memory.update_note(ann, tea.id, 1, ["Food"], "Likes green tea with milk")
    assert (counts(ann), list(MemoryNote.objects.values_list("pk", "version", "content"))) == (
        before
    )
    assert dict(NoteVector.objects.values_list("note_id", "digest")) == vectors
    assert not connection.in_atomic_block and connection.get_autocommit()

    changed = memory.update_note(ann, tea.id, 1, ["Food"], "Drinks black coffee")
    assert counts(ann) == Tally(1, len("Drinks black coffee"))
    memory.search(ann, "coffee")
    assert NoteVector.objects.get(note_id=tea.id).digest != vectors[tea.id]
    assert DjangoStore().check_counts(ann.pk).drifted is False
    assert changed.version == 2
