"""The note sources and run statuses are StrEnums: stored and sent as the same plain strings."""

from __future__ import annotations

import json

from agent_memory.kinds import MergeRunStatus, NoteSource
from agent_memory.models import MemoryNote, MergeRun


def test_members_are_their_strings_in_json_and_in_comparisons():
    assert json.dumps({"source": NoteSource.PERSON}) == '{"source": "person"}'
    assert MergeRunStatus.SUCCEEDED == "succeeded"
    assert [str(source) for source in NoteSource] == ["agent", "person", "merge", "admin", "import"]


def test_the_models_choices_are_the_enums_values_with_labels():
    source = MemoryNote._meta.get_field("source")
    status = MergeRun._meta.get_field("status")
    assert [value for value, _ in source.choices] == list(NoteSource)
    assert [value for value, _ in status.choices] == list(MergeRunStatus)
    assert (source.default, status.default) == ("agent", "running")
