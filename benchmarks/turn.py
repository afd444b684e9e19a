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
    rows.extend(_twice_the_notes(alias, smoke) for alias in env.aliases)
    rows.append(_later_turn(smoke))
    return rows


#: begin_turn for a person with twice the notes (200 against 100) may cost at most this much
#: more: the block reads in full only what it shows (issue 29).
GROWTH = 1.2


def _twice_the_notes(alias: str, smoke: bool) -> Row:
    """A new chat's ``begin_turn`` for a person with ``MAX_NOTES`` notes against one with half
    as many (the block holds about 60 of either), called alternately."""
    from agent_memory import LongTermMemory
    from agent_memory.stores.orm import DjangoStore

    repeat = 5 if smoke else 300
    memory = LongTermMemory(store=DjangoStore(using=alias), optimizer=False)
    limits = memory.limits
    full = 20 if smoke else limits.max_notes
    length = limits.max_total_chars // limits.max_notes
    people = []
    for count in (full, full // 2):
        person = make_person(alias, f"turn-{alias}-{count}")
        fill(memory, person.pk, notes(count, length, seed=count))
        people.append(person.pk)
    many, half = people
    many_s, half_s = measure_pair(
        lambda: memory.begin_turn(many, None), lambda: memory.begin_turn(half, None), repeat
    )
    ratio = many_s / half_s
    return Row(
        "turn",
        f"{label(alias)}: begin_turn, new chat, {full} notes vs {full // 2}",
        ms(many_s),
        ms(half_s),
        times(ratio),
        f"<= {GROWTH:g}x",
        ratio <= GROWTH,
        {"notes": [full, full // 2], "ours_median_s": many_s, "half_median_s": half_s},
    )


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
        figures={"ours_median_s": median, "queries": 1, "repeat": repeat},
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
