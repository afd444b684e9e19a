"""What one request of the memory screen works on, and how the screen answers it.

A :class:`MemoryPage` holds the site's memory, the person and their notes, read once per
request (and once more only after the request changed them); the views take it from
:func:`screen_view`. The rest turns a page into an answer: the whole screen, one note's row for
an htmx swap, or a redirect that lands on the element the action concerns.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from functools import cached_property
from typing import Any

from django.contrib import messages
from django.contrib.auth.models import AnonymousUser
from django.contrib.auth.views import redirect_to_login
from django.db import Error as DatabaseFailure
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_protect

from ..conf import memory_settings
from ..errors import RETRY_AFTER_SECONDS, AgentMemoryError, DuplicateNote, NoteNotFound
from ..kinds import NoteSource
from ..memory import LongTermMemory
from ..notes import Note, NoteVersion
from ..overview import Overview, RevertableMerge
from ..people import resolve_person
from ..rules import MAX_CONTENT_CHARS
from ..site import get_memory
from ..wording import field_of, person_message
from .forms import ImportForm, NoteForm
from .htmx import is_htmx, reswap, retarget, wants_fragment

logger = logging.getLogger("agent_memory.screen")

#: The prefix of a message's ``extra_tags`` that names the element it is about (``am-at:note-12``).
PLACE_TAG = "am-at:"


class MemoryPage:
    """The memory, the person and the person's notes for one request of the screen.

    Each is read on first use and kept for the request: the notes, their overview (counts, the
    notes the agent's block leaves out), the merges that can still be reverted. After a write,
    :meth:`changed` drops what was read, so the answer shows the notes as they are now.
    """

    def __init__(self, request: HttpRequest, person: Any, memory: LongTermMemory) -> None:
        self.request = request
        self.person = person
        self.memory = memory

    @cached_property
    def notes(self) -> list[Note]:
        """The person's notes, most recently changed first."""
        return self.memory.notes(self.person)

    @cached_property
    def overview(self) -> Overview:
        return self.memory.overview_of(self.notes)

    @cached_property
    def merges(self) -> list[RevertableMerge]:
        """The person's merge runs that can still be reverted (none when the store cannot
        merge)."""
        return self.memory.merges(self.person) if self.memory.can_merge else []

    @cached_property
    def categories(self) -> list[str]:
        """The person's categories (:func:`person_categories`)."""
        return person_categories(self.notes)

    def note(self, note_id: int) -> Note | None:
        """The person's note ``note_id``, or ``None`` when it was deleted meanwhile."""
        return next((note for note in self.notes if note.id == note_id), None)

    def changed(self) -> None:
        """The request changed the notes: what is read next is read again."""
        for name in ("notes", "overview", "merges", "categories"):
            self.__dict__.pop(name, None)

    def merged_runs(self) -> dict[int, int]:
        """The run that made each merged note still revertable: its row links to it."""
        return {note_id: run.id for run in self.merges for note_id in run.merged_ids}

    def histories(self, notes: list[Note]) -> dict[int, list[NoteVersion]]:
        """The earlier versions of those ``notes`` the agent changed last (read only for those:
        the screen shows what it changed, with Undo)."""
        histories = {}
        for note in notes:
            if note.source == NoteSource.AGENT and note.version > 1:
                try:
                    histories[note.id] = self.memory.history(self.person, note.id)
                except NoteNotFound:
                    continue
        return histories


def person_categories(notes: list[Note]) -> list[str]:
    """The person's categories, each once (the spelling of its most recent use), by name: the
    category picker suggests them and the filter lists them."""
    names: dict[str, str] = {}
    for note in notes:
        for name in note.categories:
            names.setdefault(name.casefold(), name)
    return sorted(names.values(), key=str.casefold)


View = Callable[..., HttpResponse]


def screen_view(view: View) -> View:
    """404 when memory is disabled, login when the request resolves to nobody
    (``RESOLVE_USER``, by default the logged-in user), never cached, CSRF-checked whatever the
    host's middleware, and a friendly 503 page when the database fails mid-request. The view
    is called with the request's :class:`MemoryPage`."""

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
            return view(request, MemoryPage(request, person, get_memory()), *args, **kwargs)
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
        reswap(retarget(response, "body"), "innerHTML")
    return response


# --- what the screen shows ----------------------------------------------------------------


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


def find_notes(page: MemoryPage, query: str, category: str) -> dict[str, Any] | None:
    """The notes the search box and the category filter ask for, or ``None`` when neither is
    used. Search ranks like the tool (:meth:`LongTermMemory.search`); the filter keeps notes
    with that category among theirs."""
    if not query and not category:
        return None
    found, total = page.notes, len(page.notes)
    if query:
        result = page.memory.search(page.person, query)
        found, total = list(result.notes), result.total
    if category:
        wanted = category.casefold()
        found = [note for note in found if wanted in (name.casefold() for name in note.categories)]
        total = len(found)
    return {"notes": found, "total": total, "query": query, "category": category}


def placed_messages(request: HttpRequest) -> dict[str, list[Any]]:
    """The messages for this page by the element they are about (``""``: the top of the page).

    A result is shown where the person acted, never off-screen: "Note saved" in the note's row,
    "Merge reverted" in the Merged section, a delete's message in the next note's row.
    """
    placed: dict[str, list[Any]] = {}
    for message in messages.get_messages(request):
        tags = str(getattr(message, "extra_tags", "") or "").split()
        anchor = next((tag[len(PLACE_TAG) :] for tag in tags if tag.startswith(PLACE_TAG)), "")
        placed.setdefault(anchor, []).append(message)
    return placed


def screen_context(page: MemoryPage, *, listing: bool = True, **extra: Any) -> dict[str, Any]:
    """What the screen's templates show. ``listing=False`` (the erase page) leaves the search,
    the filter and the messages for the screen itself."""
    request, notes = page.request, page.notes
    query = category = ""
    if listing and request.method in ("GET", "HEAD"):
        query = request.GET.get("q", "").strip()[:200]
        category = request.GET.get("category", "").strip()[:60]
    context: dict[str, Any] = {
        "notes": notes,
        # The person's pinned notes are listed apart, first; the other groups hold the rest.
        "pinned_notes": [note for note in notes if note.pinned],
        "groups": group_notes([note for note in notes if not note.pinned]),
        "memory_enabled": page.memory.enabled(page.person),
        "hidden_keys": page.overview.hidden_keys,
        "counts": page.overview,
        "categories": page.categories,
        "query": query,
        "category": category,
        "found": find_notes(page, query, category),
        "content_limit": MAX_CONTENT_CHARS,
        "merges": page.merges,
        "add_form": NoteForm(),
        "import_form": ImportForm(),
        "import_result": None,
        "editing_id": None,
        "confirming_id": None,
        "confirming_revert": None,
        "focus_id": None,
        "placed_messages": placed_messages(request) if listing else {},
        "merged_runs": page.merged_runs(),
        "base_template": base_template(),
        "histories": page.histories(notes),
    }
    context.update(extra)
    return context


def base_template() -> str:
    """The page the screen renders inside: the host's (``AGENT_MEMORY["BASE_TEMPLATE"]``, so
    its navigation stays) or the app's own."""
    return memory_settings.BASE_TEMPLATE or "agent_memory/base.html"


def render_screen(page: MemoryPage, status: int = 200, **extra: Any) -> HttpResponse:
    """The whole screen: a page, or for an htmx fragment request the screen's own element,
    swapped in place of the old one."""
    request = page.request
    context = screen_context(page, **extra)
    if wants_fragment(request) and request.headers.get("HX-Target") == "am-results":
        # The search box and the filter, as the person types: only the list changes.
        return render(request, "agent_memory/notes.html", context)
    if wants_fragment(request):
        response = render(request, "agent_memory/screen.html", context)
        return reswap(retarget(response, "#am-screen"), "outerHTML")
    # htmx swaps only 2xx answers; a browser without JavaScript gets the honest status.
    return render(
        request, "agent_memory/page.html", context, status=200 if is_htmx(request) else status
    )


def render_row(page: MemoryPage, note: Note, **extra: Any) -> HttpResponse:
    """One note's row (reading, editing or confirming a delete) for an htmx swap."""
    context = {
        "note": note,
        "placed_messages": placed_messages(page.request),
        "merged_runs": page.merged_runs(),
        "hidden_keys": page.overview.hidden_keys,
        "content_limit": MAX_CONTENT_CHARS,
        "editing_id": None,
        "confirming_id": None,
        "histories": page.histories([note]),
        **extra,
    }
    return render(page.request, "agent_memory/note_row.html", context)


def screen_url(anchor: str = "") -> str:
    url = reverse("agent_memory_screen:screen")
    return f"{url}#{anchor}" if anchor else url


def done(page: MemoryPage, note_id: int | None = None, anchor: str = "") -> HttpResponse:
    """After a change: redirect to the screen (or, for a fragment request, send it), landing
    on the note that changed or the section (``anchor``) the action concerns."""
    anchor = anchor or (f"note-{note_id}" if note_id else "")
    if wants_fragment(page.request):
        page.changed()
        return render_screen(page, focus_id=note_id)
    return HttpResponseRedirect(screen_url(anchor))


def notify(request: HttpRequest, level: int, text: str, at: str = "") -> None:
    """A message for the next page, shown at the element ``at`` names (a note's row
    ``note-<id>``, a section ``am-merges``…) or, without one, at the top of the screen."""
    messages.add_message(
        request, level, text, extra_tags=f"{PLACE_TAG}{at}" if at else "", fail_silently=True
    )


def note_gone(page: MemoryPage) -> HttpResponse:
    """The person acted on a note deleted meanwhile: say so, above the notes still there."""
    notify(
        page.request,
        messages.WARNING,
        _("This note no longer exists: it was deleted elsewhere (in another tab or by the agent)."),
        at="am-notes" if page.notes else "",
    )
    return done(page, anchor="am-notes")


def describe_error(page: MemoryPage, error: AgentMemoryError) -> str:
    """What went wrong and what to do next, in the person's words and language (never the
    model's message: see :mod:`agent_memory.wording`)."""
    existing = None
    if isinstance(error, DuplicateNote) and error.existing_id is not None:
        existing = page.note(error.existing_id)
    return person_message(error, existing)


def add_error(page: MemoryPage, form: Any, error: AgentMemoryError) -> None:
    """Show a write's error beside the field it is about (or above the form); a duplicate's
    links to the note that already holds the text (``form.duplicate_of``)."""
    form.add_error(field_of(error), describe_error(page, error))
    if isinstance(error, DuplicateNote) and error.existing_id is not None:
        if page.note(error.existing_id) is not None:
            form.duplicate_of = error.existing_id
