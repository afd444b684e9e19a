"""The block reads and renders only what its budget holds: the notes that fit are read in full,
the hidden rest by id and version; the text is the same as laying out every note."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agent_memory import LongTermMemory, prompt
from agent_memory.notes import Note
from agent_memory.stores import orm_notes
from agent_memory.stores.in_memory import InMemoryStore


def reference_blocks(notes: list[Note], budget: int) -> list[tuple[str, bool]]:
    """The layout as first specified: every line rendered, the longest prefix that fits."""
    ordered = sorted(notes, key=lambda note: (note.updated_at, note.id), reverse=True)
    lines = [prompt.note_line(note) for note in ordered]
    fixed = len(prompt.OPEN) + 1 + len(prompt.HEADER) + 1 + len(prompt.CLOSE)
    shown = 0  # even the header does not fit: every note is hidden
    for count in range(len(lines), -1, -1):
        length = fixed + sum(len(line) + 1 for line in lines[:count])
        if count < len(lines):
            length += len(prompt.overflow_line(len(lines) - count)) + 1
        if length <= budget:
            shown = count
            break
    return [(note.key, index >= shown) for index, note in enumerate(ordered)]


@pytest.mark.parametrize("seed", range(40))
def test_the_layout_shows_the_longest_prefix_that_fits_like_rendering_every_note(seed):
    rng = random.Random(seed)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    notes = [
        Note(
            number,
            1,
            ("Work",) * rng.randint(1, 3),
            "word & <x> " * rng.randint(1, 40),
            rng.randint(1, 9),
            "agent",
            start,
            start + timedelta(minutes=rng.randint(0, 50)),
        )
        for number in range(1, rng.randint(0, 120) + 2)
    ]
    budget = rng.choice([200, 300, 450, 700, 2_000, 6_000, 12_000, 100_000])
    got = [(block.key, block.hidden) for block in prompt.blocks(notes, budget)]
    assert got == reference_blocks(notes, budget)


@pytest.mark.django_db
def test_begin_turn_reads_in_full_only_the_notes_the_block_shows(make_user, settings, monkeypatch):
    settings.AGENT_MEMORY = {
        "MAX_NOTES": 200,
        "MAX_TOTAL_CHARS": 100_000,
        "MAX_BLOCK_CHARS": 3_000,
    }
    memory = LongTermMemory()
    person = make_user()
    for start in range(0, 200, 5):
        memory.create_notes(
            person,
            [
                {"categories": ["Work"], "content": f"Note number {n} about the release plan."}
                for n in range(start, start + 5)
            ],
        )
    everything = memory.notes(person)
    converted = []
    real = orm_notes.note_of_values
    monkeypatch.setattr(
        orm_notes, "note_of_values", lambda values: converted.append(values[0]) or real(values)
    )

    with CaptureQueriesContext(connection) as captured:
        turn = memory.begin_turn(person, None)

    shown = sum(1 for block in prompt.blocks(everything, 3_000) if not block.hidden)
    assert 10 < shown < 40
    assert turn.text == prompt.render(everything, 3_000)
    assert set(turn.state["seen"]) == {str(note.id) for note in everything[:shown]}
    # The shown notes and at most one read's worth beyond them, not all 200.
    assert shown <= len(converted) <= shown + 20
    assert len(captured.captured_queries) <= 4


def test_a_note_deleted_between_reading_versions_and_texts_is_left_out():
    store = InMemoryStore()
    memory = LongTermMemory(store=store)
    first, second, third = memory.create_notes(
        1,
        [
            {"categories": ["A"], "content": "First note."},
            {"categories": ["A"], "content": "Second note."},
            {"categories": ["A"], "content": "Third note."},
        ],
    )
    listing = store.note_listing(1)
    memory.delete_note(1, second.id, second.version)
    by_id = {note.id: note for note in store.list_notes(1)}
    gone = type(listing)(
        versions=listing.versions,
        read=lambda ids: [by_id[note_id] for note_id in ids if note_id in by_id],
    )
    layout = [block for _, block in prompt._layout(gone, 12_000)]
    assert [(block.key, block.hidden) for block in layout] == [
        (third.key, False),
        (first.key, False),
    ]


def test_escaping_gives_back_text_with_nothing_to_escape_as_it_is():
    russian = "Обращаться на «ты», без отчества; любит чай с лимоном."
    assert prompt.escape_text(russian) is russian
    assert prompt.escape_attribute(russian) is russian
    assert prompt.escape_text('a "b" & <c>\nd') == 'a "b" &amp; &lt;c&gt;&#10;d'
    assert prompt.escape_attribute('a "b"\u2028') == "a &quot;b&quot;&#8232;"
