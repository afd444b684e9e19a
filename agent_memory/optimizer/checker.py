"""The rules a proposed merge must pass before it is applied, in plain Python.

The model only proposes; this module decides. A group is rejected, with a reason, unless:

- it names 2 or more distinct ids, all current notes of this person, none named by another group;
- its categories are valid and drawn from the sources' categories;
- its content is a valid note (length, no secrets);
- nothing is lost: every number, date, time, e-mail, URL and proper name of every source is in
  the merged text (Russian and English);
- polarity holds: sources that disagree ("likes coffee" / "doesn't like coffee") are never
  merged, and what a source negates stays negated in the merged text;
- the merged text does not duplicate a note outside the group.

The heuristics lean towards rejecting: a merge that is wrongly refused costs nothing (the notes
stay as they were), one that is wrongly applied loses what the person told the agent.
What a merge must keep is found by :mod:`.details`, what it must still deny by :mod:`.polarity`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .. import rules
from ..errors import InvalidNote
from ..kinds import NoteSource
from ..notes import NewNote, Note
from . import reasons
from .details import lost_details
from .polarity import polarity_problem
from .reasons import reason


@dataclass(frozen=True)
class Verdict:
    """What the checker decided about one proposed group."""

    index: int
    ids: tuple[int, ...]
    note: NewNote | None = None
    code: str = ""
    reason: str = ""

    @property
    def accepted(self) -> bool:
        return self.note is not None

    def as_rejection(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "ids": list(self.ids),
            "code": self.code,
            "reason": self.reason,
        }


def _reject(index: int, ids: Iterable[int], code: str, reason: str) -> Verdict:
    return Verdict(index=index, ids=tuple(ids), code=code, reason=reason)


# --- the whole proposal -----------------------------------------------------------------------


def check_groups(groups: Sequence[Any], notes: Sequence[Note]) -> list[Verdict]:
    """Check every proposed group against the person's ``notes``; one verdict per group."""
    id_lists = [_group_ids(group) for group in groups]
    seen: dict[int, int] = {}
    shared: set[int] = set()
    for ids in id_lists:
        for note_id in set(ids or ()):
            if note_id in seen:
                shared.add(note_id)
            seen[note_id] = seen.get(note_id, 0) + 1
    current = {note.id for note in notes}
    verdicts = []
    for index, group in enumerate(groups):
        ids = id_lists[index]
        # A note this person does not have is reported as unknown, even when two groups name it.
        if ids is not None and shared & set(ids) and set(ids) <= current:
            twice = ", ".join(f"memory:{note_id}" for note_id in sorted(shared & set(ids)))
            verdicts.append(_reject(index, ids, "overlap", reason(reasons.OVERLAP, ids=twice)))
            continue
        verdicts.append(check_group(index, group, notes))
    return verdicts


def _group_ids(group: Any) -> list[int] | None:
    if not isinstance(group, Mapping) or not isinstance(group.get("ids"), list):
        return None
    parsed = [rules.parse_note_id(value) for value in group["ids"]]
    if any(value is None for value in parsed):
        return None
    return [value for value in parsed if value is not None]


def check_group(index: int, group: Any, notes: Sequence[Note]) -> Verdict:
    """Check one proposed group ``{"ids", "categories", "content"}``."""
    ids = _group_ids(group)
    if ids is None or not isinstance(group, Mapping):
        return _reject(index, [], "shape", reason(reasons.SHAPE))
    distinct = tuple(dict.fromkeys(ids))
    if len(distinct) < 2:
        return _reject(index, distinct, "too_few", reason(reasons.TOO_FEW))
    by_id = {note.id: note for note in notes}
    unknown = [note_id for note_id in distinct if note_id not in by_id]
    if unknown:
        listed = ", ".join(f"memory:{note_id}" for note_id in unknown)
        return _reject(index, distinct, "unknown_note", reason(reasons.UNKNOWN_NOTE, ids=listed))
    sources = [by_id[note_id] for note_id in distinct]
    pinned = [source.key for source in sources if source.pinned]
    if pinned:
        # The model is never sent a pinned note, but it may name one it guessed.
        return _reject(index, distinct, "pinned", reason(reasons.PINNED, ids=", ".join(pinned)))
    try:
        categories = rules.clean_categories(group.get("categories"))
    except InvalidNote as error:
        return _reject(index, distinct, "categories", error.message)
    allowed = {name.casefold() for source in sources for name in source.categories}
    invented = [name for name in categories if name.casefold() not in allowed]
    if invented:
        return _reject(
            index,
            distinct,
            "categories",
            reason(reasons.INVENTED_CATEGORIES, names=", ".join(invented)),
        )
    try:
        content = rules.clean_content(group.get("content"))
    except InvalidNote as error:
        return _reject(index, distinct, "content", error.message)
    lost = lost_details([source.content for source in sources], content)
    if lost:
        return _reject(
            index, distinct, "lost_detail", reason(reasons.LOST_DETAIL, details=", ".join(lost))
        )
    polarity = polarity_problem([source.content for source in sources], content)
    if polarity:
        return _reject(index, distinct, "polarity", polarity)
    others = [note for note in notes if note.id not in distinct]
    duplicate = rules.find_duplicate(categories, content, others)
    if duplicate is not None:
        return _reject(
            index,
            distinct,
            "duplicate",
            reason(reasons.DUPLICATE, key=duplicate.key),
        )
    return Verdict(
        index=index,
        ids=distinct,
        note=NewNote(categories=categories, content=content, source=NoteSource.MERGE),
    )


__all__ = ["Verdict", "check_group", "check_groups"]
