"""The API renders a note the way its declared serializer fields do, by a faster path."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from rest_framework import serializers

from agent_memory.api.serializers import MemoryListSerializer, MemoryNoteSerializer
from agent_memory.notes import Note


def by_fields(note: Note) -> dict:
    # Bypass the fast path: what the declared fields give.
    return serializers.Serializer.to_representation(MemoryNoteSerializer(), note)


def test_a_note_renders_as_its_declared_fields_do():
    moscow = timezone(timedelta(hours=3))
    notes = [
        Note(
            7,
            1,
            ("Food", "Health"),
            "Likes green tea",
            3,
            "person",
            datetime.now(UTC),
            datetime(2026, 1, 2, 3, 4, 5, 678, tzinfo=moscow),
            "chat:1",
        ),
        Note(
            8,
            "x",
            ("Работа",),
            "Пишет «код»",
            1,
            "merge",
            datetime.now(UTC),
            datetime(2026, 1, 2, tzinfo=UTC),
        ),
    ]
    for note in notes:
        fast = MemoryNoteSerializer(note).data
        assert dict(fast) == by_fields(note)
        assert list(fast) == list(by_fields(note))
    listed = MemoryListSerializer(
        {"notes": notes, "counts": {"total": 2, "limit": 200, "shown": 2}}
    )
    assert listed.data["notes"] == [by_fields(note) for note in notes]
