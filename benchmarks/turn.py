"""turn: ``begin_turn`` of a new chat for a person at full limits, against the floor.

The floor is the least any design must do: one query fetching the person's notes. Ours adds
turning rows into notes, choosing what fits ``MAX_BLOCK_CHARS`` and rendering the block. The
target is a ratio under 2, on SQLite and on PostgreSQL.
"""

from __future__ import annotations

from .environment import Environment, label, measure_pair
from .people import fill, make_person, notes
from .report import Row, ms, times

TARGET = 2.0


def run(env: Environment, *, smoke: bool = False) -> list[Row]:
    rows = [_run_on(alias, smoke) for alias in env.aliases]
    rows.append(_later_turn(smoke))
    return rows


def _later_turn(smoke: bool) -> Row:
    """A later turn of the same chat: the state says the block was sent, so no note is read;
    only the person's memory switch is (a running chat gets the block again once memory is on
    again)."""
    from django.db import connections
    from django.test.utils import CaptureQueriesContext

    from agent_memory import LongTermMemory
    from agent_memory.stores.orm import DjangoStore

    memory = LongTermMemory(store=DjangoStore(using="default"), optimizer=False)
    person = make_person("default", "turn-later")
    first = memory.begin_turn(person.pk, None)
    with CaptureQueriesContext(connections["default"]) as queries:
        later = memory.begin_turn(person.pk, first.state)
    assert later.text == "" and len(queries.captured_queries) == 1
    repeat = 5 if smoke else 1000
    median, _ = measure_pair(
        lambda: memory.begin_turn(person.pk, first.state), lambda: None, repeat
    )
    return Row(
        "turn",
        "any database: begin_turn, later turn of the same chat",
        ms(median),
        "1 query (the memory switch), empty text",
        figures={"ours_median_s": median, "queries": 0, "repeat": repeat},
    )


def _run_on(alias: str, smoke: bool) -> Row:
    from agent_memory import LongTermMemory
    from agent_memory.models import MemoryNote
    from agent_memory.stores.orm import DjangoStore

    repeat = 5 if smoke else 300
    memory = LongTermMemory(store=DjangoStore(using=alias), optimizer=False)
    limits = memory.limits
    count = 10 if smoke else limits.max_notes
    person = make_person(alias, f"turn-{alias}")
    fill(memory, person.pk, notes(count, limits.max_total_chars // limits.max_notes))
    person_rows = MemoryNote.objects.using(alias).filter(user_id=person.pk)
    total = sum(len(text) for text in person_rows.values_list("content", flat=True))

    def ours() -> str:
        return memory.begin_turn(person.pk, None).text

    def floor() -> object:
        return list(person_rows.order_by("-updated_at", "-id"))

    text = ours()
    assert text.startswith("<agent_memory>"), text[:80]
    ours_s, floor_s = measure_pair(ours, floor, repeat)
    ratio = ours_s / floor_s
    return Row(
        "turn",
        f"{label(alias)}: begin_turn, new chat, {count} notes / {total:,} chars",
        ms(ours_s),
        f"{ms(floor_s)} (one query)",
        times(ratio),
        f"< {TARGET:g}",
        ratio < TARGET,
        {
            "database": label(alias),
            "notes": count,
            "chars": total,
            "block_chars": len(text),
            "repeat": repeat,
            "ours_median_s": ours_s,
            "floor_median_s": floor_s,
            "ratio": ratio,
        },
    )
