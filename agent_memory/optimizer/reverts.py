"""The person's past merges: which can still be reverted, and reverting one run or one group.

The functions take the time from their caller (``at``, ``cutoff``: the oldest merge that may
still be reverted), so the runner's clock is the only one.
"""

from __future__ import annotations

from collections import OrderedDict
from datetime import datetime
from typing import Any

from django.utils.translation import gettext

from .. import rules, signals
from ..conf import memory_settings
from ..errors import InvalidNote, NoteNotFound
from ..kinds import MergeRunStatus, NoteSource
from ..notes import NewNote, Note
from ..overview import MergedGroup, RevertableMerge
from ..rules import parse_id


def revertable_merges(store: Any, user_id: Any, cutoff: datetime) -> list[RevertableMerge]:
    """The person's merge runs that can still be reverted, newest first, each with its groups:
    the merged note and the notes it was made from."""
    runs = {run.id: run for run in store.list_optimization_runs(user_id, limit=1000)}
    notes = {note.id: note for note in store.list_notes(user_id)}
    grouped: OrderedDict[int, list[Any]] = OrderedDict()
    for item in store.list_merged_notes(user_id):
        grouped.setdefault(item.run_id, []).append(item)
    answer = []
    for run_id, items in grouped.items():
        run = runs.get(run_id)
        if run is None or run.status == MergeRunStatus.RUNNING or run.finished_at is None:
            continue
        if any(item.created_at < cutoff for item in items):
            continue
        groups = []
        for item in items:
            note = notes.get(item.merged_note_id)
            if note is None or note.version != item.merged_version:
                continue  # reverting would answer "conflict": not revertable any more
            groups.append(MergedGroup(item.group_index, note, tuple(item.sources)))
        if groups:
            answer.append(RevertableMerge(run_id, run.finished_at, tuple(groups)))
    return answer


def is_revertable(
    store: Any, user_id: Any, number: int, index: int | None, cutoff: datetime
) -> bool:
    """Whether the person's run ``number`` (or only its group ``index``) has merged notes, none
    older than ``cutoff``."""
    mine = [
        item
        for item in store.list_merged_notes(user_id)
        if item.run_id == number and (index is None or item.group_index == index)
    ]
    return bool(mine) and all(item.created_at >= cutoff for item in mine)


def revert(
    store: Any,
    sender: Any,
    user_id: Any,
    run_id: Any,
    group: Any,
    *,
    at: datetime,
    cutoff: datetime,
) -> list[Note]:
    """Revert the person's merge run ``run_id``, or only its group number ``group``, as
    :meth:`~agent_memory.optimizer.runner.Optimizer.revert_merge` describes; ``sender`` sends
    the signals. Returns the restored notes."""
    number = parse_id(run_id)
    index = group_index(group)
    if index is None and group is not None:
        raise InvalidNote(
            gettext("group must be the number of a merged group, a whole number from 0 up.")
        )
    if number is None or not is_revertable(store, user_id, number, index, cutoff):
        raise NoteNotFound.for_merge(run_id, index)
    limits = memory_settings.limits

    def check(remaining: list[Note], originals: list[Note]) -> None:
        restored = [
            NewNote(note.categories, note.content, NoteSource(note.source)) for note in originals
        ]
        rules.check_create(remaining, restored, limits)

    merged_ids = [
        item.merged_note_id
        for item in store.list_merged_notes(user_id)
        if item.run_id == number and (index is None or item.group_index == index)
    ]
    where = {} if index is None else {"group": index}
    restored = list(store.revert_merge_checked(user_id, number, check, now=at, **where))
    signals.deleted(sender, user_id, merged_ids, signals.DeleteReason.MERGED)
    signals.saved(sender, user_id, restored)
    signals.send_after_commit(
        signals.merge_reverted, sender, user_id=user_id, run_id=number, group=index
    )
    return restored


def group_index(group: Any) -> int | None:
    """A group number given as ``1`` or ``"1"``; ``None`` if it is neither."""
    if isinstance(group, bool):
        return None
    if isinstance(group, int):
        return group if group >= 0 else None
    if isinstance(group, str) and group.isascii() and group.isdigit() and len(group) < 10:
        return int(group)
    return None
