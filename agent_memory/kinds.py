"""The fixed kinds the app stores as strings: who wrote a note, and where a merge run stands.

Plain ``StrEnum`` members, without Django, so the rules, the stores and a custom store share
them; each member equals (and serializes as) its string, e.g. ``NoteSource.AGENT == "agent"``.
The models give them their translated labels.
"""

from __future__ import annotations

from enum import StrEnum


class NoteSource(StrEnum):
    """Who wrote a note: its last version (``source``) or its first (``created_by``)."""

    AGENT = "agent"  # the model, through the tool
    PERSON = "person"  # the person, on the memory screen or through the HTTP API
    MERGE = "merge"  # the optimizer, merging duplicates
    ADMIN = "admin"  # the site's staff, in Django's admin
    IMPORT = "import"  # an import of a file (whatever source the file claims)


class MergeRunStatus(StrEnum):
    """Where one optimizer run stands."""

    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
