"""What a checked write costs in statements sent to the database, and that the cheap way gives
the same answers as the full one.

On PostgreSQL a create, update or delete that fits its room (see ``Room``) is one statement (a
call of one of the app's functions) in one round trip, outside any transaction of Django's; one
that may not fit (the same text saved already, memory nearly full, a pinned note) is checked in
full, on every database.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from datetime import date, timedelta
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from agent_memory import LongTermMemory
from agent_memory.errors import DuplicateNote, LimitReached, NoteNotFound, ReadOnlyNote
from agent_memory.models import MemoryNote, MemoryNoteVersion
from agent_memory.notes import NewNote
from agent_memory.stores.orm import DjangoStore
from agent_memory.stores.values import Guarded, Room

pytestmark = pytest.mark.django_db

on_postgresql = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="one round trip is PostgreSQL's batch"
)


@pytest.fixture
def memory(settings):
    settings.AGENT_MEMORY = {**settings.AGENT_MEMORY, "MAX_NOTES": 3, "MAX_TOTAL_CHARS": 80}
    return LongTermMemory(store=DjangoStore(), optimizer=False)


def sent(write: Callable[[], Any]) -> tuple[Any, list[str]]:
    with CaptureQueriesContext(connection) as captured:
        result = write()
    return result, [query["sql"] for query in captured]


def drop_functions(cursor: Any, migrations: Sequence[str], *, if_exists: bool = False) -> None:
    """Drop the functions the app's ``migrations`` made (each must exist, unless
    ``if_exists``)."""
    for migration in migrations:
        made_by = importlib.import_module(f"agent_memory.migrations.{migration}")
        for name, (_, arguments) in made_by.FUNCTIONS.items():
            cursor.execute(f"DROP FUNCTION {'IF EXISTS ' if if_exists else ''}{name}({arguments})")


def assert_counts_true(user: Any) -> None:
    assert not DjangoStore().check_counts(user.pk).drifted


@on_postgresql
def test_writes_that_fit_are_one_statement_each(memory, make_user):
    ann = make_user()
    memory.create_notes(ann, [{"categories": ["Food"], "content": "Likes tea"}])
    store = memory.store
    room = Room(max_notes=3, max_total_chars=80)
    (jazz,), statements = sent(
        lambda: store.insert_notes_checked(
            ann.pk, [NewNote(("Music",), "Likes jazz", "agent")], Guarded(_fail, room)
        )
    )
    assert len(statements) == 1
    changed, statements = sent(
        lambda: store.update_note_checked(
            ann.pk,
            jazz.id,
            1,
            NewNote(("Music",), "Likes free jazz", "agent"),
            Guarded(_fail, room),
        )
    )
    assert len(statements) == 1 and changed.version == 2
    assert [version.content for version in store.history(ann.pk, jazz.id)] == ["Likes jazz"]
    _, statements = sent(lambda: store.delete_note(ann.pk, jazz.id, 2))
    assert len(statements) == 1
    assert [note.content for note in memory.notes(ann)] == ["Likes tea"]
    assert_counts_true(ann)


@on_postgresql
def test_one_note_that_fits_is_one_statement_and_stored_as_given(memory, make_user):
    ann = make_user()
    store = memory.store
    memory.create_notes(ann, [{"categories": ["Food"], "content": "Likes tea"}])
    ends = timezone.now() + timedelta(days=3)
    then = timezone.now() - timedelta(days=30)
    note = NewNote(
        ("Music", "Evenings"),
        "Likes jazz",
        "person",
        origin="chat:7",
        valid_until=ends,
        created_at=then,
    )
    # The room holds exactly this note's characters (9 + 10 of 19).
    room = Room(max_notes=3, max_total_chars=19)
    (made,), statements = sent(
        lambda: store.insert_notes_checked(ann.pk, [note], Guarded(_fail, room))
    )
    assert len(statements) == 1
    (stored,) = [item for item in store.list_notes(ann.pk) if item.id == made.id]
    assert made == stored
    assert (made.categories, made.content, made.origin) == (
        ("Music", "Evenings"),
        "Likes jazz",
        "chat:7",
    )
    assert (made.valid_until, made.created_at, made.created_by, made.pinned) == (
        ends,
        then,
        "person",
        False,
    )
    # One character more than the room holds is checked in full (and the check is asked).
    with pytest.raises(AssertionError, match="the room held"):
        store.insert_notes_checked(
            ann.pk, [NewNote(("Food",), "Likes figs", "agent")], Guarded(_fail, room)
        )
    assert len(store.list_notes(ann.pk)) == 2
    assert_counts_true(ann)


@on_postgresql
def test_an_update_that_fits_is_one_statement_and_answers_the_note_as_stored(memory, make_user):
    """The update's call answers only when and by whom the note was first written; the note it
    gives back is the stored one, to the microsecond."""
    ann = make_user()
    store = memory.store
    memory.create_notes(ann, [{"categories": ["Food"], "content": "Likes tea"}])
    then = timezone.now() - timedelta(days=30)
    room = Room(max_notes=3, max_total_chars=80)
    (jazz,) = store.insert_notes_checked(
        ann.pk,
        [NewNote(("Music",), "Likes jazz", "person", origin="chat:1", created_at=then)],
        Guarded(_fail, room),
    )
    ends = timezone.now() + timedelta(days=3)
    edit = NewNote(
        ("Music", "Evenings"), "Likes free jazz", "agent", origin="chat:7", valid_until=ends
    )
    changed, statements = sent(
        lambda: store.update_note_checked(ann.pk, jazz.id, 1, edit, Guarded(_fail, room))
    )
    assert len(statements) == 1
    (stored,) = [item for item in store.list_notes(ann.pk) if item.id == jazz.id]
    assert changed == stored
    assert (changed.version, changed.created_at, changed.created_by) == (2, then, "person")
    assert (changed.source, changed.origin, changed.valid_until, changed.pinned) == (
        "agent",
        "chat:7",
        ends,
        False,
    )
    assert_counts_true(ann)


@on_postgresql
def test_several_notes_that_fit_are_one_statement_and_stored_as_given(memory, make_user):
    ann = make_user()
    store = memory.store
    memory.create_notes(ann, [{"categories": ["Food"], "content": "Likes tea"}])
    ends = timezone.now() + timedelta(days=3)
    then = timezone.now() - timedelta(days=30)
    given = [
        NewNote(("Music", "Evenings"), "Likes jazz", "agent", origin="chat:7", valid_until=ends),
        NewNote(("Food",), "Likes rice", "person", created_at=then),
    ]
    room = Room(max_notes=3, max_total_chars=80)
    made, statements = sent(lambda: store.insert_notes_checked(ann.pk, given, Guarded(_fail, room)))
    assert len(statements) == 1
    # Returned in the order given, each as it is stored.
    assert [note.content for note in made] == ["Likes jazz", "Likes rice"]
    stored = {note.id: note for note in store.list_notes(ann.pk)}
    assert made == [stored[note.id] for note in made]
    assert (made[0].origin, made[0].valid_until, made[0].categories) == (
        "chat:7",
        ends,
        ("Music", "Evenings"),
    )
    assert (made[1].created_at, made[1].created_by, made[1].pinned) == (then, "person", False)
    # The room is the whole batch's: one more note does not fit, and nothing of it is written.
    with pytest.raises(AssertionError, match="the room held"):
        store.insert_notes_checked(
            ann.pk, [NewNote(("Food",), "Likes figs", "agent")], Guarded(_fail, room)
        )
    assert len(store.list_notes(ann.pk)) == 3
    assert_counts_true(ann)


@on_postgresql
def test_texts_that_look_like_sql_arrays_or_json_are_stored_as_written(make_user, settings):
    settings.AGENT_MEMORY = {**settings.AGENT_MEMORY, "MAX_NOTES": 10, "MAX_TOTAL_CHARS": 800}
    memory = LongTermMemory(store=DjangoStore(), optimizer=False)
    store = memory.store
    ann = make_user()
    memory.create_notes(ann, [{"categories": ["Food"], "content": "Likes tea"}])  # counts row
    texts = [
        "NULL",
        '{"a", b}',
        'Back\\slash and "quotes", {braces}',
        "It's ', ; -- DROP",
        "Ünï 😀",
    ]
    given = [NewNote(('Odd "names", {x}', "NULL", "It's"), text, "agent") for text in texts]
    room = Room(max_notes=10, max_total_chars=800)
    # The first alone (one note: its values), the rest together (several: arrays of them).
    (first,), statements = sent(
        lambda: store.insert_notes_checked(ann.pk, given[:1], Guarded(_fail, room))
    )
    assert len(statements) == 1
    rest, statements = sent(
        lambda: store.insert_notes_checked(ann.pk, given[1:], Guarded(_fail, room))
    )
    assert len(statements) == 1
    made = [first, *rest]
    stored = {note.id: note for note in store.list_notes(ann.pk)}
    assert [stored[note.id].content for note in made] == texts
    assert {stored[note.id].categories for note in made} == {('Odd "names", {x}', "NULL", "It's")}
    changed = store.update_note_checked(
        ann.pk, made[0].id, 1, NewNote(("NULL",), "NULL, {}", "agent"), Guarded(_fail, room)
    )
    assert store.list_notes(ann.pk)[0] == changed
    assert [version.content for version in store.history(ann.pk, changed.id)] == ["NULL"]
    assert (changed.content, changed.categories) == ("NULL, {}", ("NULL",))
    assert_counts_true(ann)


@on_postgresql
def test_a_database_made_without_the_migration_makes_every_write_in_full(memory, make_user):
    """As with ``--no-migrations``: the functions of the first tries are missing (the store
    looks for them at its first write)."""
    migrations = ("0010_checked_write_functions", "0011_one_note_create_function")
    migrations += ("0012_delete_alone_unpinned", "0013_update_note_returns_what_it_keeps")
    with connection.cursor() as cursor:  # dropped in the test's transaction, rolled back after
        # 0012 made 0010's delete anew with another argument, 0013 its update anew.
        drop_functions(cursor, migrations, if_exists=True)
    ann = make_user()
    (tea,), statements = sent(
        lambda: memory.create_notes(ann, [{"categories": ["Food"], "content": "Likes tea"}])
    )
    called = ("SELECT agent_memory_create_in_room(", "SELECT agent_memory_create_note_in_room(")
    assert not any(name in sql for sql in statements for name in called)
    memory.update_note(ann, tea.id, 1, ["Food"], "Likes green tea")
    with pytest.raises(DuplicateNote):
        memory.create_notes(ann, [{"categories": ["Food"], "content": "likes GREEN tea"}])
    memory.delete_note(ann, tea.id, 2)
    assert memory.notes(ann) == []
    assert_counts_true(ann)


@on_postgresql
def test_a_database_not_migrated_yet_to_the_code_makes_every_write_in_full(memory, make_user):
    """As during a deploy that runs the new code before ``migrate``: the delete and update
    functions are still those of migration 0010, which take other arguments than the calls
    give, or answer otherwise."""
    earlier = importlib.import_module("agent_memory.migrations.0010_checked_write_functions")
    later = ("0012_delete_alone_unpinned", "0013_update_note_returns_what_it_keeps")
    with connection.cursor() as cursor:  # in the test's transaction, rolled back after
        drop_functions(cursor, later)
        cursor.execute(earlier.DELETE)
        cursor.execute(earlier.UPDATE)
    ann = make_user()
    (tea,), statements = sent(
        lambda: memory.create_notes(ann, [{"categories": ["Food"], "content": "Likes tea"}])
    )
    assert not any("SELECT agent_memory_create_note_in_room(" in sql for sql in statements)
    green, statements = sent(lambda: memory.update_note(ann, tea.id, 1, ["Food"], "Likes mint"))
    assert not any("_in_room(" in sql for sql in statements)
    assert memory.notes(ann) == [green]
    _, statements = sent(lambda: memory.delete_note(ann, tea.id, 2))
    assert not any("SELECT agent_memory_delete_alone(" in sql for sql in statements)
    assert memory.notes(ann) == []
    assert_counts_true(ann)


def _fail(*notes: Any) -> None:
    raise AssertionError("the room held: the check is not needed")


def test_a_text_saved_under_another_category_is_checked_in_full_and_saved(memory, make_user):
    ann = make_user()
    memory.create_notes(ann, [{"categories": ["Food"], "content": "Likes green tea"}])
    # The same text in a category it shares with no note is no duplicate (the full check says).
    (again,) = memory.create_notes(
        ann, [{"categories": ["Mornings"], "content": "likes green TEA"}]
    )
    with pytest.raises(DuplicateNote):
        memory.create_notes(ann, [{"categories": ["Food"], "content": "Likes green tea"}])
    (coffee,) = memory.create_notes(ann, [{"categories": ["Food"], "content": "Likes coffee"}])
    with pytest.raises(DuplicateNote):
        memory.update_note(ann, coffee.id, 1, ["Food"], "Likes Green tea")
    memory.update_note(ann, coffee.id, 1, ["Evenings"], "Likes Green tea")
    assert [(note.id, note.categories) for note in memory.notes(ann)[:2]] == [
        (coffee.id, ("Evenings",)),
        (again.id, ("Mornings",)),
    ]
    assert_counts_true(ann)


def test_a_full_memory_refuses_a_create_and_a_growing_update_with_figures(memory, make_user):
    ann = make_user()
    tea, rice, _ = memory.create_notes(
        ann,
        [
            {"categories": ["Food"], "content": "Likes tea"},
            {"categories": ["Food"], "content": "Likes rice"},
            {"categories": ["Music"], "content": "Likes jazz"},
        ],
    )
    with pytest.raises(LimitReached) as too_many:
        memory.create_notes(ann, [{"categories": ["Food"], "content": "Likes figs"}])
    assert (too_many.value.count, too_many.value.limit) == (3, 3)
    with pytest.raises(LimitReached) as too_long:
        memory.update_note(ann, tea.id, 1, ["Food"], "Likes tea " + "y" * 60)
    assert (too_long.value.count, too_long.value.limit) == (29, 80)
    # An update within the room, and a shorter text, always fit.
    memory.update_note(ann, tea.id, 1, ["Food"], "Likes tea " + "y" * 50)
    memory.update_note(ann, rice.id, 1, ["Food"], "Rice")
    assert sorted(note.content for note in memory.notes(ann)) == [
        "Likes jazz",
        "Likes tea " + "y" * 50,
        "Rice",
    ]
    assert_counts_true(ann)


def test_a_pinned_note_stays_the_persons_and_an_end_stays_with_its_note(memory, make_user):
    ann = make_user()
    (rule,) = memory.create_notes(
        ann,
        [{"categories": ["Style"], "content": "Address me informally"}],
        source="person",
        pinned=True,
    )
    with pytest.raises(ReadOnlyNote):
        memory.update_note(ann, rule.id, 1, ["Style"], "Address me formally")
    ends = date.today() + timedelta(days=40)
    (trip,) = memory.create_notes(ann, [{"categories": ["Plans"], "content": "Trip to Riga"}])
    memory.update_note(ann, trip.id, 1, ["Plans"], "Trip to Riga", valid_until=str(ends))
    # An edit that says nothing of the end keeps it.
    kept = memory.update_note(ann, trip.id, 2, ["Plans"], "Trip to Riga by train")
    assert kept.valid_until is not None and kept.valid_until.date() == ends
    assert [note.content for note in memory.notes(ann) if note.pinned] == ["Address me informally"]
    # Once the end has passed (the sweep has not deleted the note yet), no write finds it.
    MemoryNote.objects.filter(pk=trip.id).update(valid_until=timezone.now() - timedelta(seconds=1))
    with pytest.raises(NoteNotFound):
        memory.update_note(ann, trip.id, 3, ["Plans"], "Trip to Tallinn", valid_until=None)
    with pytest.raises(NoteNotFound):
        memory.delete_note(ann, trip.id, 3)
    assert MemoryNote.objects.get(pk=trip.id).content == "Trip to Riga by train"
    assert_counts_true(ann)


def test_the_last_ten_versions_are_kept_by_the_writes_of_every_day(memory, make_user):
    ann = make_user()
    (note,) = memory.create_notes(ann, [{"categories": ["Food"], "content": "Version 1"}])
    for version in range(1, 13):
        memory.update_note(ann, note.id, version, ["Food"], f"Version {version + 1}")
    kept = memory.history(ann, note.key)
    assert [item.version for item in kept] == list(range(12, 2, -1))
    assert [item.content for item in kept][:2] == ["Version 12", "Version 11"]
    # Ten rows, one per slot: each version kept wrote over the one ten older.
    rows = MemoryNoteVersion.objects.filter(note_id=note.id).values_list("slot", "version")
    assert sorted(rows) == sorted((version % 10, version) for version in range(3, 13))


@on_postgresql
def test_the_kept_version_is_written_over_in_place_on_postgresql(memory, make_user):
    """From the eleventh change on, the update's one call keeps the version by changing the
    row ten versions older where it lies (with room on its page, a HOT update): no row added
    or deleted."""
    ann = make_user()
    (note,) = memory.create_notes(ann, [{"categories": ["Food"], "content": "Version 1"}])
    for version in range(1, 11):
        memory.update_note(ann, note.id, version, ["Food"], f"Version {version + 1}")
    (oldest_id,) = MemoryNoteVersion.objects.filter(note_id=note.id, version=1).values_list(
        "pk", flat=True
    )
    _, statements = sent(lambda: memory.update_note(ann, note.id, 11, ["Food"], "Version 12"))
    assert [sql for sql in statements if "agent_memory_memorynoteversion" in sql] == []
    assert sum("agent_memory_update_note_in_room(" in sql for sql in statements) == 1
    written_over = MemoryNoteVersion.objects.get(pk=oldest_id)
    assert (written_over.version, written_over.slot, written_over.content) == (
        11,
        1,
        "Version 11",
    )
    assert MemoryNoteVersion.objects.filter(note_id=note.id).count() == 10


@on_postgresql
def test_the_agents_delete_is_one_statement_and_a_pinned_note_stays(memory, make_user):
    ann = make_user()
    tea, rule = memory.create_notes(
        ann,
        [
            {"categories": ["Food"], "content": "Likes tea"},
            {"categories": ["Style"], "content": "Address me informally"},
        ],
    )
    rule = memory.set_pinned(ann, rule.id, rule.version, True)
    _, statements = sent(lambda: memory.delete_note(ann, tea.id, 1))
    assert len(statements) == 1
    # A pinned note is read and refused in full; the person deletes it.
    with pytest.raises(ReadOnlyNote):
        memory.delete_note(ann, rule.id, rule.version)
    assert [note.content for note in memory.notes(ann)] == ["Address me informally"]
    memory.delete_note(ann, rule.id, rule.version, source="person")
    assert memory.notes(ann) == []
    assert_counts_true(ann)


@on_postgresql
@pytest.mark.django_db(transaction=True)  # outside a transaction, as a site's writes are
def test_a_function_call_is_prepared_once_and_made_unprepared_where_the_server_loses_it(
    memory, make_user
):
    ann = make_user()
    store = memory.store
    memory.create_notes(ann, [{"categories": ["Food"], "content": "Likes tea"}])
    connection.ensure_connection()
    raw = connection.connection
    assert raw.prepare_threshold is None  # Django's default: the site's statements unprepared

    def prepared() -> list[str]:
        with connection.cursor() as cursor:
            cursor.execute("SELECT statement FROM pg_prepared_statements")
            return [statement for (statement,) in cursor.fetchall()]

    assert any("agent_memory_create_note_in_room(" in sql for sql in prepared())
    assert not any("pg_prepared_statements" in sql for sql in prepared())
    # The two reads every tool call makes (the memory switch, the category names) too.
    call = {"action": "create", "notes": [{"categories": ["Food"], "content": "Likes jam"}]}
    jam = memory.call_tool(ann, call)["notes"][0]
    assert any("memory_enabled" in sql for sql in prepared())
    assert any("jsonb_array_elements_text" in sql for sql in prepared())
    assert raw.prepare_threshold is None
    # What a pooler that hands each transaction another server connection does: the server
    # no longer has the statement psycopg prepared.
    raw.pgconn.exec_(b"DEALLOCATE ALL")
    memory.create_notes(ann, [{"categories": ["Food"], "content": "Likes rice"}])
    assert store._statements().prepare is False
    drop = {"action": "delete", "id": jam["id"], "version": jam["version"]}
    assert "error" not in memory.call_tool(ann, drop)
    assert prepared() == []
    assert [note.content for note in memory.notes(ann)] == ["Likes rice", "Likes tea"]
    assert_counts_true(ann)
