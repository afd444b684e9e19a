"""The memory screen: the person sees what the agent remembers about them and stays in control.

Server-rendered and complete without JavaScript: every change is a plain ``POST`` form answered
with a redirect (post/redirect/get), every error re-renders the page with the form as sent. With
htmx loaded (``hx-boost`` on the page) the same forms are sent in the background; editing and
delete confirmations then happen in place, in the note's own row (``HX-Request`` without
``HX-Boosted`` asks for a fragment).

Every operation goes through :class:`~agent_memory.memory.LongTermMemory` with
``source="person"``, so the screen applies exactly the rules, limits and versions the agent and
the API do. Each view gets the request's :class:`~agent_memory.screen.page.MemoryPage`, which
reads the person's notes once. Note text never goes into a URL (ids only) nor into a log.
The merges' views are in :mod:`~agent_memory.screen.merges`, download and import in
:mod:`~agent_memory.screen.transfer`.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from ..errors import AgentMemoryError, NoteNotFound, StaleVersion
from ..forms import join_categories
from ..kinds import NoteSource
from ..notes import Note
from ..rules import MAX_CONTENT_CHARS, parse_id
from .forms import NoteForm
from .htmx import is_htmx, wants_fragment
from .page import (
    MemoryPage,
    add_error,
    describe_error,
    done,
    group_notes,
    note_gone,
    notify,
    render_row,
    render_screen,
    screen_context,
    screen_url,
    screen_view,
)

#: Who the screen writes as: notes it saves show "written by you".
SOURCE = NoteSource.PERSON


def next_note_id(notes: list[Note], note_id: int) -> int | None:
    """The note listed after ``note_id`` on the screen (or, for the last, the one before):
    where the focus goes when that note is deleted."""
    order: list[int] = list(
        dict.fromkeys(note.id for group in group_notes(notes) for note in group["notes"])
    )
    if note_id not in order or len(order) < 2:
        return None
    index = order.index(note_id)
    return order[index + 1] if index + 1 < len(order) else order[index - 1]


# --- the views ------------------------------------------------------------------------------


@screen_view
@require_http_methods(["GET", "HEAD", "POST"])
def screen(request: HttpRequest, page: MemoryPage) -> HttpResponse:
    """The memory screen; a ``POST`` adds a note."""
    memory, person = page.memory, page.person
    if request.method != "POST":
        return render_screen(page)
    form = NoteForm(request.POST)
    if form.is_valid():
        try:
            (note,) = memory.create_notes(
                person,
                [
                    {
                        "categories": form.cleaned_data["categories"],
                        "content": form.cleaned_data["content"],
                        **form.valid_until_change(),
                    }
                ],
                source=SOURCE,
            )
        except AgentMemoryError as error:
            add_error(page, form, error)
        else:
            notify(
                request,
                messages.SUCCESS,
                _("Note saved. The agent will see it in new chats."),
                at=f"note-{note.id}",
            )
            return done(page, note.id)
    return render_screen(page, status=400, add_form=form)


@screen_view
@require_http_methods(["GET", "HEAD", "POST"])
def edit(request: HttpRequest, page: MemoryPage, note_id: int) -> HttpResponse:
    """The editor of one note in its row; a ``POST`` saves it if nobody changed it meanwhile."""
    memory, person = page.memory, page.person
    note = page.note(note_id)
    if note is None:
        if request.method == "POST":
            return edit_gone(page, note_id)
        return note_gone(page)
    if request.method != "POST":
        return show_editor(page, note, NoteForm(note=note))

    form = NoteForm(request.POST, note=note)
    if not form.is_valid():
        return show_editor(page, note, form, status=400)
    version = form.cleaned_data["version"] or note.version
    try:
        memory.update_note(
            person,
            note.id,
            version,
            form.cleaned_data["categories"],
            form.cleaned_data["content"],
            source=SOURCE,
            **form.valid_until_change(),
        )
    except StaleVersion:
        page.changed()
        current = page.note(note.id)
        if current is None:
            return edit_gone(page, note.id)
        draft = {
            "categories": join_categories(form.cleaned_data["categories"]),
            "content": form.cleaned_data["content"],
        }
        fresh = NoteForm(note=current)
        return show_editor(page, current, fresh, status=409, draft=draft)
    except NoteNotFound:
        page.changed()
        return edit_gone(page, note.id)
    except AgentMemoryError as error:
        add_error(page, form, error)
        return show_editor(page, note, form, status=409)
    notify(request, messages.SUCCESS, _("Saved."), at=f"note-{note.id}")
    return done(page, note.id)


@screen_view
@require_POST
def undo(request: HttpRequest, page: MemoryPage, note_id: int) -> HttpResponse:
    """Put a note back to an earlier version (``to``), if it is still at ``version``: an
    ordinary checked edit by the person."""
    memory, person = page.memory, page.person
    note = page.note(note_id)
    if note is None:
        return note_gone(page)
    wanted = parse_id(request.POST.get("to", ""))
    earlier = next(
        (item for item in memory.history(person, note.id) if item.version == wanted), None
    )
    version = parse_id(request.POST.get("version", "")) or note.version
    if earlier is None:
        notify(request, messages.WARNING, _("That earlier version is no longer kept."))
        return done(page, note.id)
    # An end that has passed meanwhile cannot come back: the note keeps its own.
    ended = earlier.valid_until is not None and earlier.valid_until <= timezone.now()
    until: dict[str, Any] = {} if ended else {"valid_until": earlier.valid_until}
    try:
        memory.update_note(
            person,
            note.id,
            version,
            list(earlier.categories),
            earlier.content,
            source=SOURCE,
            **until,
        )
    except StaleVersion:
        notify(
            request,
            messages.WARNING,
            _("This note changed again meanwhile, so nothing was undone. Check it and edit it."),
        )
    except NoteNotFound:
        return note_gone(page)
    except AgentMemoryError as error:
        notify(request, messages.ERROR, describe_error(page, error))
    else:
        notify(request, messages.SUCCESS, _("Undone: the note is back to its earlier text."))
    return done(page, note.id)


def edit_gone(page: MemoryPage, note_id: int) -> HttpResponse:
    """An edit of a note deleted meanwhile: nothing typed is lost. The editor stays where it
    was (with htmx, in the note's row; without, in "Add a note"), holding the text as sent, and
    offers to save it as a new note."""
    request = page.request
    typed = {
        "content": request.POST.get("content", ""),
        "categories": request.POST.get("categories", ""),
    }
    if wants_fragment(request):
        # In the note's row: ids of its own, the screen's "Add a note" editor is on the page too.
        form = NoteForm(typed, id_prefix=f"gone-{note_id}")
        form.is_valid()  # bound, so the editor shows the text as typed
        context = {
            "gone_id": note_id,
            "form": form,
            "content_limit": MAX_CONTENT_CHARS,
            "categories": page.categories,
        }
        return render(request, "agent_memory/note_gone.html", context)
    form = NoteForm(typed)
    form.is_valid()
    return render_screen(page, status=404, add_form=form, gone_id=note_id)


def show_editor(
    page: MemoryPage,
    note: Note,
    form: NoteForm,
    status: int = 200,
    draft: dict[str, str] | None = None,
) -> HttpResponse:
    extra = {
        "editing_id": note.id,
        "edit_form": form,
        "draft": draft,
        "merge_warning": note.id in page.merged_runs(),
    }
    if wants_fragment(page.request):
        return render_row(page, note, **extra)
    return render_screen(page, status=status, **extra)


@screen_view
@require_GET
def row(request: HttpRequest, page: MemoryPage, note_id: int) -> HttpResponse:
    """One note's row as it reads (htmx: "Cancel" in the editor or the delete confirmation)."""
    note = page.note(note_id)
    if note is None:
        return note_gone(page)
    if wants_fragment(request):
        return render_row(page, note, focus_id=note.id)
    return HttpResponseRedirect(screen_url(f"note-{note.id}"))


@screen_view
@require_http_methods(["GET", "HEAD", "POST"])
def delete(request: HttpRequest, page: MemoryPage, note_id: int) -> HttpResponse:
    """Asks to confirm deleting a note; a ``POST`` deletes it (at the version that was shown)."""
    note = page.note(note_id)
    if note is None:
        return note_gone(page)
    if request.method != "POST":
        return show_delete_confirmation(page, note)
    following = next_note_id(page.notes, note.id)
    try:
        page.memory.delete_note(
            page.person, note.id, request.POST.get("version", ""), source=SOURCE
        )
    except StaleVersion:
        page.changed()
        current = page.note(note.id)
        if current is None:
            return note_gone(page)
        return show_delete_confirmation(page, current, changed=True)
    except NoteNotFound:
        return note_gone(page)
    except AgentMemoryError as error:
        notify(request, messages.ERROR, describe_error(page, error))
        return done(page)
    notify(
        request,
        messages.SUCCESS,
        _("Note deleted. The agent will not see it in new chats."),
        # Focus moves to the next note; with none left the empty screen says so at its top.
        at=f"note-{following}" if following else "",
    )
    return done(page, following)


@screen_view
@require_POST
def pin(request: HttpRequest, page: MemoryPage, note_id: int) -> HttpResponse:
    """Pins (``pinned=1``) or unpins (``pinned=0``) a note at the version that was shown."""
    note = page.note(note_id)
    if note is None:
        return note_gone(page)
    wanted = request.POST.get("pinned") == "1"
    try:
        page.memory.set_pinned(
            page.person, note.id, request.POST.get("version", ""), wanted, source=SOURCE
        )
    except NoteNotFound:
        return note_gone(page)
    except StaleVersion:
        notify(
            request,
            messages.WARNING,
            _(
                "This note changed elsewhere (in another tab or by the agent). Here it is as it is "
                "now; pin or unpin it again if you still want to."
            ),
        )
        return done(page, note.id)
    except AgentMemoryError as error:
        notify(request, messages.ERROR, describe_error(page, error))
        return done(page, note.id)
    if wanted:
        text = _("Note pinned. The agent reads it first in every new chat and cannot change it.")
    else:
        text = _("Note unpinned. The agent may now update or delete it.")
    notify(request, messages.SUCCESS, text)
    return done(page, note.id)


@screen_view
@require_POST
def switch(request: HttpRequest, page: MemoryPage) -> HttpResponse:
    """Turns the person's memory on (``enabled=1``) or off (``enabled=0``)."""
    on = request.POST.get("enabled") == "1"
    page.memory.set_enabled(page.person, on)
    if on:
        text = _("Memory is on. The agent will read your notes in new chats and may save new ones.")
    else:
        text = _(
            "Memory is off. The agent neither sees nor saves notes; your notes stay here, and you "
            "can still edit, download or erase them."
        )
    notify(request, messages.SUCCESS, text)
    if wants_fragment(request):
        return render_screen(page)
    return HttpResponseRedirect(screen_url("am-switch"))


def show_delete_confirmation(page: MemoryPage, note: Note, changed: bool = False) -> HttpResponse:
    extra = {"confirming_id": note.id, "changed": changed}
    if wants_fragment(page.request):
        return render_row(page, note, **extra)
    return render_screen(page, status=409 if changed else 200, **extra)


@screen_view
@require_http_methods(["GET", "HEAD", "POST"])
def erase(request: HttpRequest, page: MemoryPage) -> HttpResponse:
    """Asks to confirm erasing the whole memory, saying what will be lost; a ``POST`` erases it.

    The confirmation carries the number of notes it showed: if the agent saved more meanwhile,
    the person is asked again with the new figures rather than losing notes they never saw.
    """
    changed = False
    if request.method == "POST":
        shown = request.POST.get("total", "")
        if shown == str(page.overview.total):
            deleted = page.memory.clear(page.person)
            notify(
                request,
                messages.SUCCESS,
                ngettext(
                    "Memory erased: %(count)d note deleted. The agent starts from a clean slate.",
                    "Memory erased: %(count)d notes deleted. The agent starts from a clean slate.",
                    deleted,
                )
                % {"count": deleted},
                at="am-empty",
            )
            return HttpResponseRedirect(screen_url("am-empty"))
        changed = True
    if not page.notes and not changed:
        return HttpResponseRedirect(screen_url())
    context = screen_context(page, listing=False, changed=changed)
    status = 409 if changed and not is_htmx(request) else 200
    return render(request, "agent_memory/erase.html", context, status=status)
