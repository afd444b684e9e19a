"""Reverting merges from admin, through the site's memory like the memory screen does.

A whole run is reverted group by group: every group that can be reverted is, and each one that
cannot (a merged note changed since, no room, a duplicate) is named with its reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.contrib import messages
from django.http import HttpRequest
from django.utils.translation import gettext

from ..errors import AgentMemoryError
from ..site import get_memory
from ..wording import revert_message
from .display import AnyModelAdmin, group_label


def merge_label(run_id: int, group: int | None = None) -> str:
    """ "Merge 3", or "Group 2 of merge 3" for its second group (groups are stored from 0)."""
    if group is None:
        return gettext("Merge %(run)s") % {"run": run_id}
    return gettext("%(group)s of merge %(run)s") % {"group": group_label(group), "run": run_id}


def revert_run(
    user_id: Any, run_id: int
) -> tuple[list[int | None], list[tuple[int | None, AgentMemoryError]]]:
    """Revert every group of the run still applied, each on its own: the groups reverted,
    and each group that was not with its refusal (group ``None``: the run has nothing left to
    revert, and the refusal says why)."""
    memory = get_memory()
    applied = {
        item.group_index
        for item in memory.store.list_merged_notes(user_id)
        if item.run_id == run_id
    }
    groups: list[int | None] = [*sorted(applied)] or [None]
    reverted: list[int | None] = []
    refused: list[tuple[int | None, AgentMemoryError]] = []
    for group in groups:
        try:
            memory.revert_merge(user_id, run_id, group=group)
        except AgentMemoryError as error:
            refused.append((group, error))
        else:
            reverted.append(group)
    return reverted, refused


def _reverted_message(run_id: int, reverted: list[int | None]) -> str:
    """What a partly reverted run says about the groups that were reverted."""
    groups = [group for group in reverted if group is not None]
    numbers = ", ".join(str(group + 1) for group in groups)
    if len(groups) == 1:
        text = gettext("Merge %(run)s: group %(numbers)s reverted, its original notes are back.")
    else:
        text = gettext("Merge %(run)s: groups %(numbers)s reverted, their original notes are back.")
    return text % {"run": run_id, "numbers": numbers}


def revert_in_admin(
    model_admin: AnyModelAdmin, request: HttpRequest, targets: Sequence[tuple[Any, int, int | None]]
) -> None:
    """Revert each ``(person, run id, group or None for the whole run)`` with the checks and
    messages of the memory screen; staff need the right to change notes."""
    if not request.user.has_perm("agent_memory.change_memorynote"):
        model_admin.message_user(
            request, gettext("Reverting a merge needs the right to change notes."), messages.ERROR
        )
        return
    done = gettext("Merge reverted: the original notes are back.")
    for user_id, run_id, group in targets:
        if group is not None:
            try:
                get_memory().revert_merge(user_id, run_id, group=group)
            except AgentMemoryError as error:
                refusal = f"{merge_label(run_id, group)}: {revert_message(error)}"
                model_admin.message_user(request, refusal, messages.ERROR)
            else:
                model_admin.message_user(
                    request, f"{merge_label(run_id, group)}: {done}", messages.SUCCESS
                )
            continue
        reverted, refused = revert_run(user_id, run_id)
        if reverted and not refused:
            model_admin.message_user(request, f"{merge_label(run_id)}: {done}", messages.SUCCESS)
        elif reverted:
            model_admin.message_user(request, _reverted_message(run_id, reverted), messages.SUCCESS)
        for index, why in refused:
            refusal = f"{merge_label(run_id, index)}: {revert_message(why)}"
            model_admin.message_user(request, refusal, messages.ERROR)


__all__ = ["merge_label", "revert_in_admin", "revert_run"]
