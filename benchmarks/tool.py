"""tool: ``call_tool`` create / update / search against a bare ORM statement for the same row.

Ours parses and validates the call, takes the person's write lock, checks limits and duplicates
(against the person's counts and the notes with the same text), writes, and answers with
JSON-ready dicts; the floor is the one ORM statement a hand-written tool would run without any of
that. It runs for a person with 100 notes (half the default limit) and with 200 (the limits
doubled for it, so the person is not full), to show the cost of a write does not grow with
memory.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from . import write_anatomy
from .environment import Environment, label, measure_pair
from .people import fill, make_person, notes
from .report import Row, ms, times

NEEDLE = "Keeps a spare Zanzibar keyboard at the office for pairing sessions."
#: Notes the person has saved before the measured calls (the default limit is 200).
SIZES = (100, 200)
#: A checked write at most this many bare ORM writes (a delete: checked creates).
WRITE_TARGET = 1.5
#: A checked write at most this many LangGraph ``PostgresStore.put`` calls.
LANGGRAPH_TARGET = 1.2
SMOKE_SIZES = (10, 20)


def run(env: Environment, *, smoke: bool = False) -> list[Row]:
    from django.conf import settings
    from django.test.utils import override_settings

    from agent_memory.conf import DEFAULTS

    rows: list[Row] = []
    for size in SMOKE_SIZES if smoke else SIZES:
        # Room for the person's notes plus the measured creates, at the default note length.
        room = max(DEFAULTS["MAX_NOTES"], 2 * size)
        limits = {
            "MAX_NOTES": room,
            "MAX_TOTAL_CHARS": DEFAULTS["MAX_TOTAL_CHARS"] * room // DEFAULTS["MAX_NOTES"],
        }
        with override_settings(AGENT_MEMORY={**settings.AGENT_MEMORY, **limits}):
            for alias in env.aliases:
                rows.extend(_run_on(alias, size, smoke))
                if alias == "postgresql" and env.postgres_url:
                    rows.extend(_beside_langgraph(env.postgres_url, size, smoke))
    return rows


def _beside_langgraph(url: str, size: int, smoke: bool) -> list[Row]:
    """Our create, update and search beside LangGraph's ``PostgresStore.put`` (a new key, then
    the same key again) and ``search`` on the same server, for a person with ``size`` notes;
    and beside ``put`` of the same key, our update's call alone through psycopg
    (:func:`_bare_update_call`), to tell the server's share of the gap from our Python's.

    LangGraph's store here has no embedding index (that needs pgvector and an embedder), so its
    ``search`` lists the namespace's items, newest first, without ranking them by the query:
    it is the floor of a read of ten items, where ours ranks every note by stems and meaning.
    """
    try:
        import psycopg
        from langgraph.store.postgres import PostgresStore
    except ImportError:
        return [
            Row(
                "tool",
                "LangGraph PostgresStore: not installed (pip install -r requirements-dev.txt)",
                "-",
            )
        ]
    from agent_memory import LongTermMemory
    from agent_memory.stores.orm import DjangoStore

    repeat = 5 if smoke else 300
    store = DjangoStore(using="postgresql")
    memory = LongTermMemory(store=store, optimizer=False)
    limits = memory.limits
    person = make_person("postgresql", f"langgraph-{size}")
    items = notes(size - 1, limits.max_total_chars // limits.max_notes, seed=13)
    fill(memory, person.pk, items)
    memory.create_notes(person.pk, [{"categories": ["Tools"], "content": NEEDLE}])
    numbers = itertools.count(1)
    space = ("memories", str(person.pk))
    rows: list[Row] = []
    conninfo = url.replace("postgres://", "postgresql://", 1)
    with (
        PostgresStore.from_conn_string(conninfo) as theirs,
        # Set up as LangGraph's connection: every statement prepared, each its own transaction.
        psycopg.connect(conninfo, autocommit=True, prepare_threshold=0) as bare,
    ):
        theirs.setup()
        for number, item in enumerate(items):
            theirs.put(space, f"note-{number}", item)
        theirs.put(space, "needle", {"categories": ["Tools"], "content": NEEDLE})
        made: list[Any] = []

        def create_ours() -> object:
            note = {"categories": ["Tools"], "content": f"Bench create {next(numbers)}: tabs."}
            made.append(_answer(memory.call_tool(person.pk, {"action": "create", "notes": [note]})))
            return made[-1]

        def put_new() -> object:
            number = next(numbers)
            theirs.put(space, f"bench-{number}", {"categories": ["Tools"], "content": "tabs"})
            return number

        def remove() -> None:
            while made:
                note = made.pop()["notes"][0]
                memory.delete_note(person.pk, note["id"], note["version"])

        target = memory.notes(person.pk)[-1]
        state = {"version": target.version}

        def update_ours() -> object:
            call = {
                "action": "update",
                "id": target.key,
                "version": state["version"],
                "categories": ["Work"],
                "content": f"Bench update {next(numbers)}: prefers tabs in Makefiles.",
            }
            answer = _answer(memory.call_tool(person.pk, call))
            state["version"] = answer["note"]["version"]
            return answer

        def put_again() -> object:
            text = f"Bench update {next(numbers)}: prefers tabs in Makefiles."
            theirs.put(space, "note-0", {"categories": ["Work"], "content": text})
            return text

        def search_ours() -> object:
            return _answer(memory.call_tool(person.pk, {"action": "search", "query": "zanzibar"}))

        def checked_create() -> object:
            made.append(
                _checked_create(store, person.pk, limits, f"Bench create {next(numbers)}: tabs.")[0]
            )
            return made[-1]

        def remove_checked() -> None:
            while made:
                note = made.pop()
                store.delete_note(person.pk, note.id, note.version)

        def checked_update() -> object:
            text = f"Bench update {next(numbers)}: prefers tabs in Makefiles."
            note = _checked_update(store, person.pk, target.id, state["version"], limits, text)
            state["version"] = note.version
            return note

        def search_theirs() -> object:
            return theirs.search(space, query="zanzibar", limit=10)

        update_call = _bare_update_call(bare, limits, person.pk, target.id, state)

        cases = (
            ("call_tool create", "put (new key)", create_ours, put_new, remove),
            ("store checked create", "put (new key)", checked_create, put_new, remove_checked),
            ("call_tool update", "put (same key)", update_ours, put_again, None),
            ("store checked update", "put (same key)", checked_update, put_again, None),
            ("bare psycopg update call", "put (same key)", update_call, put_again, None),
            ("call_tool search", "search (no index)", search_ours, search_theirs, None),
        )
        if size == (SMOKE_SIZES if smoke else SIZES)[0]:
            rows += write_anatomy.rows(conninfo, person.pk, smoke)
        for action, theirs_name, ours, floor, between in cases:
            ours_s, theirs_s = measure_pair(ours, floor, repeat, between=between)
            ratio = ours_s / theirs_s
            targeted = action.startswith("store")
            rows.append(
                Row(
                    "tool",
                    f"PostgreSQL: {action} vs LangGraph PostgresStore.{theirs_name}, {size} notes",
                    ms(ours_s),
                    f"{ms(theirs_s)} (LangGraph {theirs_name})",
                    times(ratio),
                    f"<= {LANGGRAPH_TARGET}" if targeted else "",
                    ratio <= LANGGRAPH_TARGET if targeted else None,
                    figures={
                        "action": action,
                        "notes": size,
                        "repeat": repeat,
                        "ours_median_s": ours_s,
                        "langgraph_median_s": theirs_s,
                        "ratio": ratio,
                    },
                )
            )
    return rows


def _checked_create(store: Any, user_id: Any, limits: Any, content: str) -> list[Any]:
    """The store's checked create alone, with the front door's own check and its room (limits
    and duplicates under the person's lock): what the tool's create writes through."""
    from agent_memory import rules
    from agent_memory.kinds import NoteSource
    from agent_memory.notes import NewNote
    from agent_memory.stores.values import Guarded, Room

    new = [NewNote(("Tools",), content, NoteSource.AGENT)]
    check = Guarded(
        lambda existing: rules.check_create(existing, new, limits),
        Room(limits.max_notes, limits.max_total_chars),
    )
    return list(store.insert_notes_checked(user_id, new, check))


def _checked_update(
    store: Any, user_id: Any, note_id: int, version: int, limits: Any, content: str
) -> Any:
    """The store's checked update alone, with the front door's check and room."""
    from agent_memory import rules
    from agent_memory.kinds import NoteSource
    from agent_memory.notes import NewNote
    from agent_memory.stores.values import Guarded, Room

    new = NewNote(("Work",), content, NoteSource.AGENT)
    check = Guarded(
        lambda existing, current: rules.check_update(existing, current, new, limits),
        Room(limits.max_notes, limits.max_total_chars, same_valid_until=True),
    )
    return store.update_note_checked(user_id, note_id, version, new, check)


def _bare_update_call(
    connection: Any, limits: Any, user_id: Any, note_id: int, state: dict[str, int]
) -> Callable[[], object]:
    """The store's checked update of ``note_id`` (at ``state["version"]``, counted up) as its one
    call, sent through ``connection`` (a psycopg connection set up as LangGraph's), its values
    built as the store builds them: what the update of the same note costs with no Django and
    no check in Python around the call."""
    from django.utils import timezone

    from agent_memory.kinds import NoteSource
    from agent_memory.notes import NewNote
    from agent_memory.rules import text_digest
    from agent_memory.stores.orm_sql import NoteStatements
    from agent_memory.stores.values import Room

    sql = NoteStatements("postgresql")
    user = sql.user(user_id)
    room = Room(limits.max_notes, limits.max_total_chars, same_valid_until=True)
    numbers = itertools.count(1)

    def call() -> object:
        text = f"Bench bare update {next(numbers)}: prefers tabs in Makefiles."
        new = NewNote(("Work",), text, NoteSource.AGENT)
        statement = sql.update_in_room(
            user, note_id, state["version"], new, text_digest(text), timezone.now(), room
        )
        answer = connection.execute(*statement).fetchall()
        assert answer, "the call wrote nothing"
        state["version"] += 1
        return answer

    return call


def _answer(result: dict[str, Any]) -> dict[str, Any]:
    assert "error" not in result, result
    return result


def _run_on(alias: str, size: int, smoke: bool) -> list[Row]:
    from django.db import transaction
    from django.utils import timezone

    from agent_memory import LongTermMemory
    from agent_memory.locking import recount as count_notes
    from agent_memory.locking import set_tally
    from agent_memory.models import MemoryNote
    from agent_memory.stores.orm import DjangoStore

    repeat = 5 if smoke else 300
    store = DjangoStore(using=alias)
    memory = LongTermMemory(store=store, optimizer=False)
    limits = memory.limits
    count = size - 1
    person = make_person(alias, f"tool-{alias}-{size}")
    user_id = person.pk
    fill(memory, user_id, notes(count, limits.max_total_chars // limits.max_notes, seed=11))
    memory.create_notes(user_id, [{"categories": ["Tools"], "content": NEEDLE}])
    table = MemoryNote.objects.using(alias)
    numbers = itertools.count(1)
    ours_row, floor_row = table.filter(user_id=user_id).order_by("id")[:2]
    versions = {"ours": ours_row.version, "floor": floor_row.version}

    def text(kind: str) -> str:
        return f"Bench {kind} {next(numbers)}: prefers tabs over spaces in Makefiles."

    def recount() -> None:
        # The floor's rows bypass the person's counts: set them right (untimed).
        with transaction.atomic(using=alias):
            set_tally(user_id, alias, count_notes(user_id, alias))

    def remove_bench_rows() -> None:
        table.filter(user_id=user_id, content__startswith="Bench ").delete()
        recount()

    def create_ours() -> object:
        note = {"categories": ["Tools"], "content": text("create")}
        return _answer(memory.call_tool(user_id, {"action": "create", "notes": [note]}))

    def create_floor() -> object:
        return table.create(
            user_id=user_id, categories=["Tools"], content=text("insert"), source="agent"
        )

    def update_ours() -> object:
        call = {
            "action": "update",
            "id": f"memory:{ours_row.pk}",
            "version": versions["ours"],
            "categories": ["Work"],
            "content": text("update"),
        }
        answer = _answer(memory.call_tool(user_id, call))
        versions["ours"] = answer["note"]["version"]
        return answer

    def update_floor() -> object:
        changed = table.filter(pk=floor_row.pk, user_id=user_id, version=versions["floor"]).update(
            categories=["Work"],
            content=text("update"),
            version=versions["floor"] + 1,
            updated_at=timezone.now(),
        )
        assert changed == 1
        versions["floor"] += 1
        return changed

    def search_ours() -> object:
        answer = _answer(memory.call_tool(user_id, {"action": "search", "query": "zanzibar"}))
        assert answer["total"] == 1, answer
        return answer

    def search_floor() -> object:
        found = list(table.filter(user_id=user_id, content__icontains="zanzibar")[:10])
        assert len(found) == 1
        return found

    def read_notes() -> object:
        return memory.notes(user_id)

    def checked_create() -> object:
        return _checked_create(store, user_id, limits, text("checked create"))

    checked = {"version": ours_row.version}

    def checked_update() -> object:
        updated = _checked_update(
            store, user_id, ours_row.pk, checked["version"], limits, text("checked update")
        )
        checked["version"] = updated.version
        return updated

    targets: list[Any] = []

    def next_target() -> None:
        # Untimed: the bench rows go, and a note to delete in the next round is made.
        remove_bench_rows()
        targets.append(_checked_create(store, user_id, limits, text("delete target"))[0])

    def delete_one() -> object:
        note = targets.pop()
        store.delete_note(user_id, note.id, note.version)
        return note

    cases = (
        # The creates first: between their runs the bench rows go, which the updates then make.
        ("create", "insert", create_ours, create_floor, remove_bench_rows),
        ("checked create", "insert", checked_create, create_floor, remove_bench_rows),
        ("update", "update", update_ours, update_floor, recount),
        ("checked update", "update", checked_update, update_floor, recount),
        ("delete", "store checked create", delete_one, checked_create, next_target),
        ("search", "select", search_ours, search_floor, None),
    )
    rows = []
    for action, statement, ours, floor, between in cases:
        if action == "checked update":
            checked["version"] = table.get(pk=ours_row.pk).version
        if action == "delete":
            next_target()
        ours_s, floor_s = measure_pair(ours, floor, repeat, between=between)
        ratio = ours_s / floor_s
        # The goals on PostgreSQL: the store's checked write (lock, check, write, counts) at
        # most 1.5 bare ORM writes, a delete at most 1.5 checked creates; the tool's call adds
        # its parsing, the secrets scan, the person's switch and the category spellings.
        targeted = alias != "default" and action in ("checked create", "checked update", "delete")
        what = "call_tool" if action in ("create", "update", "search") else "store"
        floor_name = statement if statement.startswith("store") else f"ORM {statement}"
        rows.append(
            Row(
                "tool",
                f"{label(alias)}: {what} {action}, person with {count + 1} notes",
                ms(ours_s),
                f"{ms(floor_s)} ({floor_name})",
                times(ratio),
                f"<= {WRITE_TARGET}" if targeted else "",
                ratio <= WRITE_TARGET if targeted else None,
                {
                    "database": label(alias),
                    "action": action,
                    "notes": count + 1,
                    "repeat": repeat,
                    "ours_median_s": ours_s,
                    "floor_median_s": floor_s,
                    "ratio": ratio,
                },
            )
        )
    # A search reads all the person's notes (a write reads only their counts and same-text notes).
    read_s, _ = measure_pair(read_notes, lambda: None, repeat)
    rows.append(
        Row(
            "tool",
            f"{label(alias)}: of which reading the person's {count + 1} notes",
            ms(read_s),
            "",
            "",
            "",
            None,
            {"database": label(alias), "action": "read", "ours_median_s": read_s},
        )
    )
    return rows
