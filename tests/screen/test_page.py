"""The memory screen through Django's test client: each request reads the person's notes once,
Revert asks first, and a refused note shows every error at once with the focus on the first.

The same flows run in Chromium in tests/browser/test_screen_confirm.py.
"""

from __future__ import annotations

import re

from django.db import connection
from django.test.utils import CaptureQueriesContext

from agent_memory.models import MemoryNote
from tests.screen.pages import HTMX, SCREEN, scripted_merges, text

NOTE_LIST = 'SELECT "agent_memory_memorynote"."id"'


def note_lists_read(request) -> int:
    """How many times ``request()`` reads a list of notes from the database."""
    with CaptureQueriesContext(connection) as queries:
        response = request()
    assert response.status_code == 200
    return sum(1 for query in queries.captured_queries if query["sql"].startswith(NOTE_LIST))


# --- the notes are read once per request ------------------------------------------------------


def test_the_screen_reads_the_persons_notes_once_besides_the_merges(client, person, memory):
    for index in range(3):
        memory.create_notes(person, [{"categories": ["Food"], "content": f"Likes dish {index}"}])
    # One for the page, one inside the merges (they check each merged note is still as merged).
    assert note_lists_read(lambda: client.get(SCREEN)) == 2
    assert note_lists_read(lambda: client.get(SCREEN, {"category": "Food"})) == 2


def test_the_editor_and_the_delete_confirmation_read_the_notes_once(client, person, memory):
    (note,) = memory.create_notes(person, [{"categories": ["Food"], "content": "Likes tea"}])
    edit = f"/memory/notes/{note.id}/edit"
    delete = f"/memory/notes/{note.id}/delete"
    assert note_lists_read(lambda: client.get(edit, **HTMX)) == 2
    assert note_lists_read(lambda: client.get(delete, **HTMX)) == 2
    assert note_lists_read(lambda: client.get(f"/memory/notes/{note.id}/row", **HTMX)) == 2


# --- Revert asks first ------------------------------------------------------------------------


def revert_link(page: str) -> str:
    return re.search(r'href="(/memory/merges/3/revert\?group=(\d+))"', page).group(1)


def test_revert_opens_a_confirmation_that_reverts_only_when_pressed(client, person, settings):
    scripted_merges(settings, person)
    link = revert_link(text(client.get(SCREEN)))

    response = client.get(link)

    assert response.status_code == 200
    page = text(response)
    assert "Revert this merge?" in page
    assert "The 2 original notes above come back as they were" in page
    # The safe choice is first and focused; the revert is a form of its own.
    keep = re.search(r'<a class="am-button" href="/memory/#merge-3-group-\d+" autofocus', page)
    assert keep and "Keep the merge" in page
    form = re.search(r'<form method="post" action="/memory/merges/3/revert".*?</form>', page, re.S)
    assert 'name="group"' in form.group(0) and "Revert the merge" in form.group(0)
    # Asking reverted nothing.
    assert "Merge reverted" not in page
    assert "Prefers tea, no sugar" in text(client.get(SCREEN))


def test_revert_confirmation_for_htmx_is_the_group_alone(client, person, settings):
    scripted_merges(settings, person)
    link = revert_link(text(client.get(SCREEN)))
    group = re.search(r"group=(\d+)", link).group(1)

    page = text(client.get(link, **HTMX))

    assert page.lstrip().startswith(f'<div class="am-merge-group" id="merge-3-group-{group}">')
    assert "Revert this merge?" in page
    assert f'hx-get="/memory/merges/3/groups/{group}"' in page  # "Keep the merge" swaps it back
    back = text(client.get(f"/memory/merges/3/groups/{group}", **HTMX))
    assert "Revert this merge?" not in back
    assert re.search(r'href="/memory/merges/3/revert\?group=\d+"[^>]*autofocus', back, re.S)


def test_keep_the_merge_without_javascript_goes_back_to_the_group(client, person, settings):
    scripted_merges(settings, person)
    link = revert_link(text(client.get(SCREEN)))
    group = re.search(r"group=(\d+)", link).group(1)
    response = client.get(f"/memory/merges/3/groups/{group}")
    assert response.status_code == 302
    assert response["Location"] == f"/memory/#merge-3-group-{group}"


def test_confirming_a_merge_that_is_gone_says_it_cannot_be_reverted(client, person, settings):
    scripted_merges(settings, person)
    response = client.get("/memory/merges/99/revert?group=0")
    assert response.status_code == 404
    assert "This merge can no longer be reverted" in text(response)


def test_revert_confirmation_speaks_russian(client, person, settings):
    scripted_merges(settings, person)
    link = revert_link(text(client.get(SCREEN)))
    page = text(client.get(link, HTTP_ACCEPT_LANGUAGE="ru"))
    assert "Отменить объединение?" in page
    assert "Оставить объединение" in page


def test_revert_confirmation_is_404_when_the_store_cannot_merge(client, person, settings):
    settings.AGENT_MEMORY = {"STORE": {"BACKEND": "tests.scripted_store.NoteOnlyStore"}}
    assert client.get("/memory/merges/3/revert?group=0").status_code == 404
    assert client.get("/memory/merges/3/groups/0").status_code == 404


# --- every error at once, the focus on the first ------------------------------------------


def field_errors(page: str) -> list[str]:
    return re.findall(r'class="am-field-error" id="([^"]+)-error"', page)


def autofocused(page: str) -> list[str]:
    return re.findall(r'<(?:textarea|input)[^>]*\bid="([^"]+)"[^>]*\bautofocus\b', page, re.S)


def test_the_editor_leaves_checking_to_the_server_which_shows_every_error(client, person):
    response = client.post(SCREEN, {"categories": "", "content": ""})
    page = text(response)
    assert response.status_code == 400
    # No browser check in the way: it would stop at the first field, one error at a time.
    assert re.search(r'<form class="am-editor am-editor--add"[^>]*novalidate', page)
    assert field_errors(page) == ["new-note-content", "new-note-categories"]
    assert "Write what the agent should remember." in page
    assert "Give the note a category" in page
    assert autofocused(page) == ["new-note-content"]


def test_an_error_on_the_categories_alone_takes_the_focus_there(client, person, memory):
    (note,) = memory.create_notes(person, [{"categories": ["Food"], "content": "Likes tea"}])
    response = client.post(
        f"/memory/notes/{note.id}/edit",
        {"categories": "A, B, C, D", "content": "Likes green tea", "version": 1},
        **HTMX,
    )
    page = text(response)
    assert field_errors(page) == [f"note-{note.id}-categories"]
    assert autofocused(page) == [f"note-{note.id}-categories"]


def test_an_error_on_the_date_alone_takes_the_focus_there(client, person):
    page = text(
        client.post(
            SCREEN, {"categories": "Food", "content": "Likes tea", "valid_until": "2001-01-01"}
        )
    )
    assert field_errors(page) == ["new-note-valid_until"]
    assert autofocused(page) == ["new-note-valid_until"]


def test_a_duplicate_links_to_the_note_that_holds_the_text(client, person, memory):
    (tea,) = memory.create_notes(person, [{"categories": ["Drinks"], "content": "Likes tea"}])
    response = client.post(SCREEN, {"categories": "drinks", "content": "likes  TEA"})
    page = text(response)
    assert response.status_code == 400
    error = re.search(r'id="new-note-content-error">(.*?)</p>', page, re.S).group(1)
    assert "already saved in another note (Drinks)" in error
    assert f'href="/memory/#note-{tea.id}"' in error
    assert autofocused(page) == ["new-note-content"]
    assert MemoryNote.objects.filter(user=person).count() == 1
