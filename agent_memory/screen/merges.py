"""The memory screen's "Merged" section: revert an automatic merge, after a confirmation.

"Revert" asks first (a ``GET``: the confirmation in the group's own place, in the page without
JavaScript or swapped into the group with htmx); the confirmation's button sends the ``POST``
that reverts.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods

from ..errors import AgentMemoryError, NoteNotFound
from ..overview import MergedGroup, RevertableMerge
from ..wording import revert_message
from .htmx import wants_fragment
from .page import MemoryPage, done, notify, render_screen, screen_url, screen_view


def merging(page: MemoryPage) -> None:
    """The merge addresses exist only where the store can merge."""
    if not page.memory.can_merge:
        raise Http404("This store cannot merge notes.")


def find_group(
    page: MemoryPage, run_id: int, group: str | None
) -> tuple[RevertableMerge | None, MergedGroup | None]:
    """The revertable run ``run_id`` and its group numbered ``group`` (``None``: the whole
    run); ``(None, None)`` when there is no such run or group to revert any more."""
    run = next((run for run in page.merges if run.id == run_id), None)
    if run is None or group is None:
        return run, None
    found = next((item for item in run.groups if str(item.group) == group), None)
    return (run, found) if found is not None else (None, None)


def merge_anchor(run_id: int, group: str | None) -> str:
    return f"merge-{run_id}-group-{group}" if group else f"merge-{run_id}"


def show_error(
    page: MemoryPage, run_id: int, group: str | None, error: AgentMemoryError
) -> HttpResponse:
    """The screen with the reason ``run_id`` (its ``group``) was not reverted, beside it."""
    status = {"not_found": 404, "invalid": 400}.get(error.kind, 409)
    merge_error = {
        "run_id": str(run_id),
        "group": group or "",
        "message": revert_message(error),
        # A run no longer listed gets its message at the top of the section.
        "listed": any(run.id == run_id for run in page.merges),
    }
    return render_screen(page, status=status, merge_error=merge_error)


@screen_view
@require_http_methods(["GET", "HEAD", "POST"])
def revert(request: HttpRequest, page: MemoryPage, run_id: int) -> HttpResponse:
    """Asks to confirm reverting one merged group (``group``), or the whole run without it; a
    ``POST`` reverts it: the original notes come back and the merged ones go."""
    merging(page)
    data = request.POST if request.method == "POST" else request.GET
    group = data.get("group") or None
    if request.method != "POST":
        return show_revert_confirmation(page, run_id, group)
    try:
        page.memory.revert_merge(page.person, run_id, group)
    except AgentMemoryError as error:
        return show_error(page, run_id, group, error)
    notify(
        request, messages.SUCCESS, _("Merge reverted: the original notes are back."), at="am-merges"
    )
    return done(page, anchor="am-merges")


def show_revert_confirmation(page: MemoryPage, run_id: int, group: str | None) -> HttpResponse:
    """ "Revert this merge?" in the group's place (the run's, for a whole run): what comes back
    and what goes, "Keep the merge" first and focused, then "Revert"."""
    run, found = find_group(page, run_id, group)
    if run is None:
        return show_error(page, run_id, group, NoteNotFound.for_id(run_id))
    confirming = {"run_id": run.id, "group": group or ""}
    if found is not None and wants_fragment(page.request):
        return render_group(page, run, found, confirming_revert=confirming)
    return render_screen(page, confirming_revert=confirming)


def render_group(
    page: MemoryPage, run: RevertableMerge, group: MergedGroup, **extra: Any
) -> HttpResponse:
    """One merged group of the Merged section, for an htmx swap."""
    context = {"run": run, "group": group, "confirming_revert": None, **extra}
    return render(page.request, "agent_memory/merge_group.html", context)


@screen_view
@require_GET
def merge_group(request: HttpRequest, page: MemoryPage, run_id: int, group: int) -> HttpResponse:
    """One merged group as it reads (htmx: "Keep the merge" in the revert confirmation)."""
    merging(page)
    number = str(group)
    run, found = find_group(page, run_id, number)
    if not wants_fragment(request):
        anchor = merge_anchor(run_id, number) if found is not None else "am-merges"
        return HttpResponseRedirect(screen_url(anchor))
    if run is None or found is None:
        return show_error(page, run_id, number, NoteNotFound.for_id(run_id))
    return render_group(page, run, found, focus_revert=True)
