"""The memory screen: the person sees what the agent remembers about them and stays in control.

Server-rendered and complete without JavaScript: every change is a plain ``POST`` form answered
with a redirect (post/redirect/get), every error re-renders the page with the form as sent. With
htmx loaded (``hx-boost`` on the page) the same forms are sent in the background; editing and
delete confirmations then happen in place, in the note's own row (``HX-Request`` without
``HX-Boosted`` asks for a fragment).

Every operation goes through :class:`~agent_memory.memory.LongTermMemory` with
``source="person"``, so the screen applies exactly the rules, limits and versions the agent and
the API do. Note text never goes into a URL (ids only) nor into a log.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable, Sequence
from typing import Any

from django.contrib import messages
from django.contrib.auth.models import AnonymousUser
from django.contrib.auth.views import redirect_to_login
from django.core.files.uploadhandler import FileUploadHandler
from django.db import Error as DatabaseFailure
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect, QueryDict
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.utils.datastructures import MultiValueDict
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from ..api.exceptions import RETRY_AFTER_SECONDS
from ..conf import memory_settings
from ..errors import AgentMemoryError, DuplicateNote, NoteNotFound, StaleVersion
from ..forms import join_categories
from ..kinds import NoteSource
from ..memory import LongTermMemory
from ..notes import Note, NoteVersion
from ..overview import RevertableMerge
from ..people import resolve_person
from ..rules import MAX_CONTENT_CHARS, parse_id
from ..site import get_memory
from ..transfer import MAX_IMPORT_BYTES, check_import_size, parse_text
from ..wording import field_of, person_message, revert_message
from .forms import ImportForm, NoteForm

logger = logging.getLogger("agent_memory.screen")

#: Who the screen writes as: notes it saves show "written by you".
SOURCE = NoteSource.PERSON

View = Callable[..., HttpResponse]


def screen_view(view: View) -> View:
    """404 when memory is disabled, login when the request resolves to nobody
    (``RESOLVE_USER``, by default the logged-in user), never cached, CSRF-checked whatever the
    host's middleware, and a friendly 503 page when the database fails mid-request."""

    @never_cache
    @csrf_protect
    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not memory_settings.ENABLED:
            raise Http404("Memory is disabled.")
        try:
            person = resolve_person(request)
            if person is None:
                return redirect_to_login(request.get_full_path())
            return view(request, person, *args, **kwargs)
        except DatabaseFailure as error:
            return database_unavailable(request, error)

    return wrapper


def database_unavailable(request: HttpRequest, error: Exception) -> HttpResponse:
    """The page shown when the database fails during a request (connection dropped, server
    restarting, lock timeout): status 503 with ``Retry-After``, in the screen's own skin.

    Nothing was saved by the failed request. The log gets the exception's class and the
    address only, never note text. An htmx request gets the page as a 200 swapped in for the
    whole body (htmx swaps no 5xx answer, the person would see nothing happen).
    """
    logger.warning(
        "The database failed during %s %s (%s.%s); answered 503.",
        request.method,
        request.path,
        type(error).__module__,
        type(error).__qualname__,
    )
    try:
        bool(request.user.is_authenticated)
    except DatabaseFailure:
        request.user = AnonymousUser()  # the skin may show who is signed in; nobody is known
    except AttributeError:
        pass
    htmx = is_htmx(request)
    response = render(
        request,
        "agent_memory/unavailable.html",
        {"retry_url": screen_url()},
        status=200 if htmx else 503,
    )
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    if htmx:
        response["HX-Retarget"] = "body"
        response["HX-Reswap"] = "innerHTML"
    return response


# --- what the screen shows ----------------------------------------------------------------


def is_htmx(request: HttpRequest) -> bool:
    return request.headers.get("HX-Request") == "true"


def wants_fragment(request: HttpRequest) -> bool:
    """An htmx request for a piece of the page (a boosted one wants the whole page)."""
    return is_htmx(request) and request.headers.get("HX-Boosted") != "true"


def group_notes(notes: list[Note]) -> list[dict[str, Any]]:
    """Notes grouped under their first category, groups by name, notes newest first.

    A note is listed once, under its first category; its other categories show on its row,
    and each group counts (and links to) its notes listed under another.
    """
    groups: dict[str, dict[str, Any]] = {}
    for note in notes:
        name = note.categories[0] if note.categories else "—"
        group = groups.setdefault(name.casefold(), {"name": name, "notes": [], "also": 0})
        group["notes"].append(note)
    # ``also``: the notes with the group's category among their others, listed elsewhere, so
    # that the group's count is the filter's.
    for note in notes:
        for name in dict.fromkeys(category.casefold() for category in note.categories[1:]):
            if name in groups and name != note.categories[0].casefold():
                groups[name]["also"] += 1
    return sorted(groups.values(), key=lambda group: group["name"].casefold())


def revertable_merges(memory: LongTermMemory, person: Any) -> list[RevertableMerge]:
    """The person's merge runs that can still be reverted (none when the store cannot merge)."""
    return memory.merges(person) if memory.can_merge else []


def merged_runs(merges: list[RevertableMerge]) -> dict[int, int]:
    """The run that made each merged note still revertable: its row links to it."""
    return {note_id: run.id for run in merges for note_id in run.merged_ids}


def person_categories(notes: list[Note]) -> list[str]:
    """The person's categories, each once (the spelling of its most recent use), by name: the
    category picker suggests them and the filter lists them."""
    names: dict[str, str] = {}
    for note in notes:
        for name in note.categories:
            names.setdefault(name.casefold(), name)
    return sorted(names.values(), key=str.casefold)


def find_notes(
    memory: LongTermMemory, person: Any, notes: list[Note], query: str, category: str
) -> dict[str, Any] | None:
    """The notes the search box and the category filter ask for, or ``None`` when neither is
    used. Search ranks like the tool (:meth:`LongTermMemory.search`); the filter keeps notes
    with that category among theirs."""
    if not query and not category:
        return None
    found, total = notes, len(notes)
    if query:
        result = memory.search(person, query)
        found, total = list(result.notes), result.total
    if category:
        wanted = category.casefold()
        found = [note for note in found if wanted in (name.casefold() for name in note.categories)]
        total = len(found)
    return {"notes": found, "total": total, "query": query, "category": category}


#: The prefix of a message's ``extra_tags`` that names the element it is about (``am-at:note-12``).
PLACE_TAG = "am-at:"


def placed_messages(request: HttpRequest | None) -> dict[str, list[Any]]:
    """The messages for this page by the element they are about (``""``: the top of the page).

    A result is shown where the person acted, never off-screen: "Note saved" in the note's row,
    "Merge reverted" in the Merged section, a delete's message in the next note's row.
    """
    placed: dict[str, list[Any]] = {}
    if request is None:
        return placed
    for message in messages.get_messages(request):
        tags = str(getattr(message, "extra_tags", "") or "").split()
        anchor = next((tag[len(PLACE_TAG) :] for tag in tags if tag.startswith(PLACE_TAG)), "")
        placed.setdefault(anchor, []).append(message)
    return placed


def screen_context(
    memory: LongTermMemory, person: Any, request: HttpRequest | None = None, **extra: Any
) -> dict[str, Any]:
    overview = memory.overview(person)
    notes = list(overview.notes)
    pinned = [note for note in notes if note.pinned]
    query = category = ""
    if request is not None and request.method in ("GET", "HEAD"):
        query = request.GET.get("q", "").strip()[:200]
        category = request.GET.get("category", "").strip()[:60]
    merges = revertable_merges(memory, person)
    context: dict[str, Any] = {
        "notes": notes,
        # The person's pinned notes are listed apart, first; the other groups hold the rest.
        "pinned_notes": pinned,
        "groups": group_notes([note for note in notes if not note.pinned]),
        "memory_enabled": memory.enabled(person),
        "hidden_keys": overview.hidden_keys,
        "counts": overview,
        "categories": person_categories(notes),
        "query": query,
        "category": category,
        "found": find_notes(memory, person, notes, query, category),
        "content_limit": MAX_CONTENT_CHARS,
        "merges": merges,
        "add_form": NoteForm(),
        "import_form": ImportForm(),
        "import_result": None,
        "editing_id": None,
        "confirming_id": None,
        "focus_id": None,
        "placed_messages": placed_messages(request),
        "merged_runs": merged_runs(merges),
        "base_template": base_template(),
        "histories": agent_changes(memory, person, notes),
    }
    context.update(extra)
    return context


def agent_changes(
    memory: LongTermMemory, person: Any, notes: Sequence[Note]
) -> dict[int, list[NoteVersion]]:
    """The earlier versions of the notes the agent changed last (read only for those: the
    screen shows what it changed, with Undo)."""
    histories = {}
    for note in notes:
        if note.source == NoteSource.AGENT and note.version > 1:
            try:
                histories[note.id] = memory.history(person, note.id)
            except NoteNotFound:
                continue
    return histories


def base_template() -> str:
    """The page the screen renders inside: the host's (``AGENT_MEMORY["BASE_TEMPLATE"]``, so
    its navigation stays) or the app's own."""
    return memory_settings.BASE_TEMPLATE or "agent_memory/base.html"


def render_screen(
    request: HttpRequest, memory: LongTermMemory, person: Any, status: int = 200, **extra: Any
) -> HttpResponse:
    """The whole screen: a page, or for an htmx fragment request the screen's own element,
    swapped in place of the old one."""
    context = screen_context(memory, person, request, **extra)
    if wants_fragment(request) and request.headers.get("HX-Target") == "am-results":
        # The search box and the filter, as the person types: only the list changes.
        return render(request, "agent_memory/notes.html", context)
    if wants_fragment(request):
        response = render(request, "agent_memory/screen.html", context)
        response["HX-Retarget"] = "#am-screen"
        response["HX-Reswap"] = "outerHTML"
        return response
    # htmx swaps only 2xx answers; a browser without JavaScript gets the honest status.
    return render(
        request, "agent_memory/page.html", context, status=200 if is_htmx(request) else status
    )


def render_row(
    request: HttpRequest, memory: LongTermMemory, person: Any, note: Note, **extra: Any
) -> HttpResponse:
    """One note's row (reading, editing or confirming a delete) for an htmx swap."""
    context = {
        "note": note,
        "placed_messages": placed_messages(request),
        "merged_runs": merged_runs(revertable_merges(memory, person)),
        "hidden_keys": memory.overview(person).hidden_keys,
        "content_limit": MAX_CONTENT_CHARS,
        "editing_id": None,
        "confirming_id": None,
        "histories": agent_changes(memory, person, [note]),
        **extra,
    }
    return render(request, "agent_memory/note_row.html", context)


def screen_url(anchor: str = "") -> str:
    url = reverse("agent_memory_screen:screen")
    return f"{url}#{anchor}" if anchor else url


def done(
    request: HttpRequest,
    memory: LongTermMemory,
    person: Any,
    note_id: int | None = None,
    anchor: str = "",
) -> HttpResponse:
    """After a change: redirect to the screen (or, for a fragment request, send it), landing
    on the note that changed or the section (``anchor``) the action concerns."""
    anchor = anchor or (f"note-{note_id}" if note_id else "")
    if wants_fragment(request):
        return render_screen(request, memory, person, focus_id=note_id)
    return HttpResponseRedirect(screen_url(anchor))


def notify(request: HttpRequest, level: int, text: str, at: str = "") -> None:
    """A message for the next page, shown at the element ``at`` names (a note's row
    ``note-<id>``, a section ``am-merges``…) or, without one, at the top of the screen."""
    messages.add_message(
        request, level, text, extra_tags=f"{PLACE_TAG}{at}" if at else "", fail_silently=True
    )


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


def find_note(memory: LongTermMemory, person: Any, note_id: int) -> Note | None:
    """The person's note, or ``None`` when it was deleted meanwhile."""
    try:
        return memory.note(person, note_id)
    except NoteNotFound:
        return None


def note_gone(request: HttpRequest, memory: LongTermMemory, person: Any) -> HttpResponse:
    notify(
        request,
        messages.WARNING,
        _("This note no longer exists: it was deleted elsewhere (in another tab or by the agent)."),
        at="am-notes" if memory.notes(person) else "",
    )
    return done(request, memory, person, anchor="am-notes")


def describe_error(error: AgentMemoryError, memory: LongTermMemory, person: Any) -> str:
    """What went wrong and what to do next, in the person's words and language (never the
    model's message: see :mod:`agent_memory.wording`)."""
    existing = None
    if isinstance(error, DuplicateNote) and error.existing_id is not None:
        existing = find_note(memory, person, error.existing_id)
    return person_message(error, existing)


def add_error(form: Any, error: AgentMemoryError, memory: LongTermMemory, person: Any) -> None:
    """Show a write's error beside the field it is about (or above the form); a duplicate's
    links to the note that already holds the text (``form.duplicate_of``)."""
    form.add_error(field_of(error), describe_error(error, memory, person))
    if isinstance(error, DuplicateNote) and error.existing_id is not None:
        if find_note(memory, person, error.existing_id) is not None:
            form.duplicate_of = error.existing_id


# --- the views ------------------------------------------------------------------------------


@screen_view
@require_http_methods(["GET", "HEAD", "POST"])
def screen(request: HttpRequest, person: Any) -> HttpResponse:
    """The memory screen; a ``POST`` adds a note."""
    memory = get_memory()
    if request.method != "POST":
        return render_screen(request, memory, person)
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
            add_error(form, error, memory, person)
        else:
            notify(
                request,
                messages.SUCCESS,
                _("Note saved. The agent will see it in new chats."),
                at=f"note-{note.id}",
            )
            return done(request, memory, person, note.id)
    return render_screen(request, memory, person, status=400, add_form=form)


@screen_view
@require_http_methods(["GET", "HEAD", "POST"])
def edit(request: HttpRequest, person: Any, note_id: int) -> HttpResponse:
    """The editor of one note in its row; a ``POST`` saves it if nobody changed it meanwhile."""
    memory = get_memory()
    note = find_note(memory, person, note_id)
    if note is None:
        if request.method == "POST":
            return edit_gone(request, memory, person, note_id)
        return note_gone(request, memory, person)
    if request.method != "POST":
        return show_editor(request, memory, person, note, NoteForm(note=note))

    form = NoteForm(request.POST, note=note)
    if not form.is_valid():
        return show_editor(request, memory, person, note, form, status=400)
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
        current = find_note(memory, person, note.id)
        if current is None:
            return edit_gone(request, memory, person, note.id)
        draft = {
            "categories": join_categories(form.cleaned_data["categories"]),
            "content": form.cleaned_data["content"],
        }
        fresh = NoteForm(note=current)
        return show_editor(request, memory, person, current, fresh, status=409, draft=draft)
    except NoteNotFound:
        return edit_gone(request, memory, person, note.id)
    except AgentMemoryError as error:
        add_error(form, error, memory, person)
        return show_editor(request, memory, person, note, form, status=409)
    notify(request, messages.SUCCESS, _("Saved."), at=f"note-{note.id}")
    return done(request, memory, person, note.id)


@screen_view
@require_POST
def undo(request: HttpRequest, person: Any, note_id: int) -> HttpResponse:
    """Put a note back to an earlier version (``to``), if it is still at ``version``: an
    ordinary checked edit by the person."""
    memory = get_memory()
    note = find_note(memory, person, note_id)
    if note is None:
        return note_gone(request, memory, person)
    wanted = parse_id(request.POST.get("to", ""))
    earlier = next(
        (item for item in memory.history(person, note.id) if item.version == wanted), None
    )
    version = parse_id(request.POST.get("version", "")) or note.version
    if earlier is None:
        notify(request, messages.WARNING, _("That earlier version is no longer kept."))
        return done(request, memory, person, note.id)
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
        return note_gone(request, memory, person)
    except AgentMemoryError as error:
        notify(request, messages.ERROR, describe_error(error, memory, person))
    else:
        notify(request, messages.SUCCESS, _("Undone: the note is back to its earlier text."))
    return done(request, memory, person, note.id)


def edit_gone(
    request: HttpRequest, memory: LongTermMemory, person: Any, note_id: int
) -> HttpResponse:
    """An edit of a note deleted meanwhile: nothing typed is lost. The editor stays where it
    was (with htmx, in the note's row; without, in "Add a note"), holding the text as sent, and
    offers to save it as a new note."""
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
            "categories": person_categories(memory.notes(person)),
        }
        return render(request, "agent_memory/note_gone.html", context)
    form = NoteForm(typed)
    form.is_valid()
    return render_screen(request, memory, person, status=404, add_form=form, gone_id=note_id)


def show_editor(
    request: HttpRequest,
    memory: LongTermMemory,
    person: Any,
    note: Note,
    form: NoteForm,
    status: int = 200,
    draft: dict[str, str] | None = None,
) -> HttpResponse:
    merged = (run.merged_ids for run in revertable_merges(memory, person))
    extra = {
        "editing_id": note.id,
        "edit_form": form,
        "draft": draft,
        "merge_warning": any(note.id in ids for ids in merged),
    }
    if wants_fragment(request):
        return render_row(request, memory, person, note, **extra)
    return render_screen(request, memory, person, status=status, **extra)


@screen_view
@require_GET
def row(request: HttpRequest, person: Any, note_id: int) -> HttpResponse:
    """One note's row as it reads (htmx: "Cancel" in the editor or the delete confirmation)."""
    memory = get_memory()
    note = find_note(memory, person, note_id)
    if note is None:
        return note_gone(request, memory, person)
    if wants_fragment(request):
        return render_row(request, memory, person, note, focus_id=note.id)
    return HttpResponseRedirect(screen_url(f"note-{note.id}"))


@screen_view
@require_http_methods(["GET", "HEAD", "POST"])
def delete(request: HttpRequest, person: Any, note_id: int) -> HttpResponse:
    """Asks to confirm deleting a note; a ``POST`` deletes it (at the version that was shown)."""
    memory = get_memory()
    note = find_note(memory, person, note_id)
    if note is None:
        return note_gone(request, memory, person)
    if request.method != "POST":
        return show_delete_confirmation(request, memory, person, note)
    following = next_note_id(memory.notes(person), note.id)
    try:
        memory.delete_note(person, note.id, request.POST.get("version", ""), source=SOURCE)
    except StaleVersion:
        current = find_note(memory, person, note.id)
        if current is None:
            return note_gone(request, memory, person)
        return show_delete_confirmation(request, memory, person, current, changed=True)
    except NoteNotFound:
        return note_gone(request, memory, person)
    except AgentMemoryError as error:
        notify(request, messages.ERROR, describe_error(error, memory, person))
        return done(request, memory, person)
    notify(
        request,
        messages.SUCCESS,
        _("Note deleted. The agent will not see it in new chats."),
        # Focus moves to the next note; with none left the empty screen says so at its top.
        at=f"note-{following}" if following else "",
    )
    return done(request, memory, person, following)


@screen_view
@require_POST
def pin(request: HttpRequest, person: Any, note_id: int) -> HttpResponse:
    """Pins (``pinned=1``) or unpins (``pinned=0``) a note at the version that was shown."""
    memory = get_memory()
    note = find_note(memory, person, note_id)
    if note is None:
        return note_gone(request, memory, person)
    wanted = request.POST.get("pinned") == "1"
    try:
        memory.set_pinned(person, note.id, request.POST.get("version", ""), wanted, source=SOURCE)
    except NoteNotFound:
        return note_gone(request, memory, person)
    except StaleVersion:
        notify(
            request,
            messages.WARNING,
            _(
                "This note changed elsewhere (in another tab or by the agent). Here it is as it is "
                "now; pin or unpin it again if you still want to."
            ),
        )
        return done(request, memory, person, note.id)
    except AgentMemoryError as error:
        notify(request, messages.ERROR, describe_error(error, memory, person))
        return done(request, memory, person, note.id)
    if wanted:
        text = _("Note pinned. The agent reads it first in every new chat and cannot change it.")
    else:
        text = _("Note unpinned. The agent may now update or delete it.")
    notify(request, messages.SUCCESS, text)
    return done(request, memory, person, note.id)


@screen_view
@require_POST
def switch(request: HttpRequest, person: Any) -> HttpResponse:
    """Turns the person's memory on (``enabled=1``) or off (``enabled=0``)."""
    memory = get_memory()
    on = request.POST.get("enabled") == "1"
    memory.set_enabled(person, on)
    if on:
        text = _("Memory is on. The agent will read your notes in new chats and may save new ones.")
    else:
        text = _(
            "Memory is off. The agent neither sees nor saves notes; your notes stay here, and you "
            "can still edit, download or erase them."
        )
    notify(request, messages.SUCCESS, text)
    if wants_fragment(request):
        return render_screen(request, memory, person)
    return HttpResponseRedirect(screen_url("am-switch"))


def show_delete_confirmation(
    request: HttpRequest, memory: LongTermMemory, person: Any, note: Note, changed: bool = False
) -> HttpResponse:
    extra = {"confirming_id": note.id, "changed": changed}
    if wants_fragment(request):
        return render_row(request, memory, person, note, **extra)
    return render_screen(request, memory, person, status=409 if changed else 200, **extra)


@screen_view
@require_http_methods(["GET", "HEAD", "POST"])
def erase(request: HttpRequest, person: Any) -> HttpResponse:
    """Asks to confirm erasing the whole memory, saying what will be lost; a ``POST`` erases it.

    The confirmation carries the number of notes it showed: if the agent saved more meanwhile,
    the person is asked again with the new figures rather than losing notes they never saw.
    """
    memory = get_memory()
    context = screen_context(memory, person)
    changed = False
    if request.method == "POST":
        shown = request.POST.get("total", "")
        if shown == str(context["counts"].total):
            deleted = memory.clear(person)
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
    if not context["notes"] and not changed:
        return HttpResponseRedirect(screen_url())
    context["changed"] = changed
    status = 409 if changed and not is_htmx(request) else 200
    return render(request, "agent_memory/erase.html", context, status=status)


@screen_view
@require_POST
def revert(request: HttpRequest, person: Any, run_id: int) -> HttpResponse:
    """Reverts one merged group (``group`` in the form), or the whole run without it: the
    original notes come back and the merged ones go."""
    memory = get_memory()
    if not memory.can_merge:
        raise Http404("This store cannot merge notes.")
    group = request.POST.get("group") or None
    try:
        memory.revert_merge(person, run_id, group)
    except AgentMemoryError as error:
        status = {"not_found": 404, "invalid": 400}.get(error.kind, 409)
        merge_error = {
            "run_id": str(run_id),
            "group": group or "",
            "message": revert_message(error),
        }
        return render_screen(request, memory, person, status=status, merge_error=merge_error)
    notify(
        request, messages.SUCCESS, _("Merge reverted: the original notes are back."), at="am-merges"
    )
    return done(request, memory, person, anchor="am-merges")


@screen_view
@require_GET
def export(request: HttpRequest, person: Any) -> HttpResponse:
    """Download my memory: the person's notes as a JSON file (the import reads it back)."""
    document = get_memory().export(person)
    response = HttpResponse(
        json.dumps(document, ensure_ascii=False, indent=2),
        content_type="application/json; charset=utf-8",
    )
    filename = f"memory-{timezone.localdate().isoformat()}.json"
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


#: The largest import form read: the file's cap, and room for the other fields and the
#: multipart framing.
IMPORT_FORM_BYTES = MAX_IMPORT_BYTES + 64 * 1024


class BoundedUploadHandler(FileUploadHandler):
    """Refuses a multipart body past :data:`IMPORT_FORM_BYTES` before a byte of it is read:
    the form gets no fields and the view says the file is too large. Smaller bodies go on to
    the site's own handlers."""

    def handle_raw_input(
        self,
        input_data: Any,
        META: Any,
        content_length: int,
        boundary: Any,
        encoding: str | None = None,
    ) -> tuple[QueryDict, MultiValueDict[str, Any]] | None:
        if content_length <= IMPORT_FORM_BYTES:
            return None
        if self.request is not None:
            self.request.META[REFUSED_BODY] = content_length
        return QueryDict(encoding=encoding), MultiValueDict()

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes:
        return raw_data

    def file_complete(self, file_size: int) -> None:
        return None


#: Where :class:`BoundedUploadHandler` notes the length of a body it refused.
REFUSED_BODY = "agent_memory.refused_body_bytes"


def bounded_upload(view: View) -> View:
    """Install :class:`BoundedUploadHandler` before anything reads the body. The CSRF middleware
    would read it first, so this outer view is exempt; the wrapped view checks CSRF itself
    (:func:`screen_view`), on the bounded body."""

    @csrf_exempt
    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        request.upload_handlers.insert(0, BoundedUploadHandler(request))
        return view(request, *args, **kwargs)

    return wrapper


@bounded_upload
@screen_view
@require_http_methods(["GET", "HEAD", "POST"])
def import_notes(request: HttpRequest, person: Any) -> HttpResponse:
    """Import notes: a file from "Download my memory", or one note per line. All or nothing;
    notes already saved are skipped and listed on the page. A ``GET`` (a reload of the
    answer's address) goes back to the screen's import form. A body past 1 MB is refused
    unread."""
    if request.method != "POST":
        return HttpResponseRedirect(screen_url("am-transfer"))
    memory = get_memory()
    posted, files = request.POST, request.FILES  # read through the bounded handler
    refused = request.META.get(REFUSED_BODY)
    if refused is not None:
        form = ImportForm(posted, files)
        form.errors.clear()  # "required": there is a file, too large to be read
        try:
            check_import_size(refused)
        except AgentMemoryError as error:
            form.add_error("file", describe_error(error, memory, person))
        return render_screen(
            request, memory, person, status=400, import_form=form, focus_import=True
        )
    form = ImportForm(posted, files)
    if form.is_valid():
        try:
            result = memory.import_notes(
                person,
                parse_text(form.cleaned_data["file"]),
                categories=form.cleaned_data["categories"] or None,
            )
        except AgentMemoryError as error:
            form.add_error("file", describe_error(error, memory, person))
        else:
            return render_screen(request, memory, person, import_result=result, focus_import=True)
    return render_screen(request, memory, person, status=400, import_form=form, focus_import=True)
