"""Admin writes a note through the site's memory: the same checks, lock, history and signals as
every other path; a refusal is shown on the change form with what was typed, and nothing is
saved or logged."""

from __future__ import annotations

import re
from html import unescape

import pytest
from django.contrib.admin.models import LogEntry
from django.test import override_settings

from agent_memory import signals
from agent_memory.models import MemoryNote, MemoryNoteVersion
from agent_memory.site import get_memory

from .admin_pages import NOTES, add, change_data, page

pytestmark = pytest.mark.usefixtures("ops")


@pytest.fixture
def memory():
    return get_memory()


@pytest.fixture
def saved():
    """What each ``note_saved`` signal carried, as (person id, note id, version, source)."""
    heard: list[tuple[object, int, int, str]] = []

    def receiver(sender, user_id, note_id, version, source, **kwargs):
        heard.append((user_id, note_id, version, source))

    signals.note_saved.connect(receiver, dispatch_uid="test_admin_writes")
    yield heard
    signals.note_saved.disconnect(dispatch_uid="test_admin_writes")


def typed(response, name: str) -> str:
    """What the form shows again in its field ``name`` (a text box or a text input)."""
    html = page(response)
    area = re.search(rf'<textarea[^>]*name="{name}"[^>]*>(.*?)</textarea>', html, re.S)
    if area:
        return unescape(area.group(1)).strip()
    field = re.search(rf'<input[^>]*name="{name}"[^>]*value="([^"]*)"', html)
    assert field, f"no field {name} on the form"
    return unescape(field.group(1))


def refused(response, message: str) -> str:
    """The form shown again (not a redirect, not a 500) with ``message`` on it."""
    assert response.status_code == 200
    html = unescape(page(response))
    assert message in html
    assert "errornote" in html or "errorlist" in html
    return html


# --- what a write through the front door does --------------------------------------------------


def test_an_admin_edit_keeps_the_earlier_version_logs_it_and_sends_note_saved(
    client, memory, ann, saved, django_capture_on_commit_callbacks
):
    note = add(memory, ann, "Prefers tea")
    saved.clear()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            f"{NOTES}{note.id}/change/", change_data(note, content="Prefers green tea")
        )
    assert response.status_code == 302
    assert saved == [(ann.pk, note.id, 2, "admin")]
    earlier = MemoryNoteVersion.objects.get(note_id=note.id)
    assert (earlier.version, earlier.content) == (1, "Prefers tea")
    entry = LogEntry.objects.get(object_id=str(note.id))
    assert entry.is_change()
    detail = page(client.get(f"{NOTES}{note.id}/change/"))
    assert "v1 · " in detail and "Prefers tea" in detail  # the earlier version, read-only


def test_an_admin_add_is_logged_and_sends_note_saved(
    client, ann, saved, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            f"{NOTES}add/", {"user": ann.pk, "categories": "Work", "content": "Uses ruff"}
        )
    row = MemoryNote.objects.get(user=ann)
    assert response.status_code == 302
    assert response["Location"].endswith(NOTES)
    assert saved == [(ann.pk, row.pk, 1, "admin")]
    assert LogEntry.objects.get(object_id=str(row.pk)).is_addition()


# --- each refusal the front door can give admin -------------------------------------------------


def assert_nothing_saved(ann, contents, saved):
    assert sorted(MemoryNote.objects.filter(user=ann).values_list("content", flat=True)) == sorted(
        contents
    )
    assert not LogEntry.objects.exists()
    assert saved == []


@override_settings(AGENT_MEMORY={"MAX_NOTES": 1})
def test_an_add_past_the_note_limit_keeps_what_was_typed(client, memory, ann, saved):
    add(memory, ann, "Prefers tea")
    saved.clear()
    response = client.post(
        f"{NOTES}add/", {"user": ann.pk, "categories": "Work, Tools", "content": "Writes Python"}
    )
    refused(response, "Memory is full: 1 of 1 notes are saved")
    assert typed(response, "content") == "Writes Python"
    assert typed(response, "categories") == "Work, Tools"
    assert_nothing_saved(ann, ["Prefers tea"], saved)


@override_settings(AGENT_MEMORY={"MAX_TOTAL_CHARS": 40})
def test_an_edit_past_the_character_limit_keeps_what_was_typed(client, memory, ann, saved):
    note = add(memory, ann, "Prefers tea")
    add(memory, ann, "Writes Python daily")
    saved.clear()
    longer = "Prefers green tea with a slice of lemon"
    response = client.post(f"{NOTES}{note.id}/change/", change_data(note, content=longer))
    refused(response, "Memory is full:")
    assert typed(response, "content") == longer
    assert_nothing_saved(ann, ["Prefers tea", "Writes Python daily"], saved)


def test_an_add_of_a_saved_text_is_a_duplicate_and_keeps_what_was_typed(client, memory, ann, saved):
    first = add(memory, ann, "Prefers tea")
    saved.clear()
    response = client.post(
        f"{NOTES}add/", {"user": ann.pk, "categories": "Food", "content": "prefers TEA"}
    )
    refused(response, f"This text is already saved as memory:{first.id}")
    assert typed(response, "content") == "prefers TEA"
    assert_nothing_saved(ann, ["Prefers tea"], saved)


def test_an_edit_into_a_saved_text_is_a_duplicate_and_keeps_what_was_typed(
    client, memory, ann, saved
):
    add(memory, ann, "Prefers tea")
    note = add(memory, ann, "Prefers coffee")
    saved.clear()
    response = client.post(f"{NOTES}{note.id}/change/", change_data(note, content="prefers TEA"))
    refused(response, "This text is already saved as memory:")
    assert typed(response, "content") == "prefers TEA"
    assert_nothing_saved(ann, ["Prefers tea", "Prefers coffee"], saved)


def test_a_stale_edit_keeps_what_was_typed_and_says_the_current_version(client, memory, ann, saved):
    note = add(memory, ann, "Prefers tea")
    memory.update_note(ann, note.id, 1, ["Food"], "Prefers coffee now")
    saved.clear()
    response = client.post(
        f"{NOTES}{note.id}/change/", change_data(note, content="Prefers green tea")
    )
    refused(response, "changed elsewhere while you were editing it (it is now version 2)")
    assert typed(response, "content") == "Prefers green tea"
    # The form still carries the version it was loaded with: saving again is refused again.
    assert typed(response, "expected_version") == "1"
    assert_nothing_saved(ann, ["Prefers coffee now"], saved)


def test_a_secret_is_refused_on_the_form_and_the_text_is_kept(client, memory, ann, saved):
    note = add(memory, ann, "Prefers tea")
    saved.clear()
    card = "Card 4111 1111 1111 1111 for payments"
    response = client.post(f"{NOTES}{note.id}/change/", change_data(note, content=card))
    refused(response, "Memory is not a place for passwords, keys or card numbers")
    assert typed(response, "content") == card
    assert_nothing_saved(ann, ["Prefers tea"], saved)


@override_settings(AGENT_MEMORY={"MAX_BLOCK_CHARS": 60})
def test_pinning_past_half_the_block_is_refused_and_the_note_stays_unpinned(
    client, memory, ann, saved
):
    note = add(memory, ann, "Never suggest npm; always suggest pnpm or yarn instead", ("Rules",))
    saved.clear()
    response = client.post(f"{NOTES}{note.id}/change/", change_data(note, pinned="on"))
    refused(response, "Pinned notes would take")
    assert re.search(r'<input[^>]*name="pinned"[^>]*checked', page(response))
    assert not MemoryNote.objects.get(pk=note.id).pinned
    assert_nothing_saved(ann, [note.content], saved)


def test_the_russian_form_shows_the_refusal_in_russian(client, memory, ann):
    add(memory, ann, "Prefers tea")
    with override_settings(AGENT_MEMORY={"MAX_NOTES": 1}):
        response = client.post(
            f"{NOTES}add/",
            {"user": ann.pk, "categories": "Work", "content": "Writes Python"},
            HTTP_ACCEPT_LANGUAGE="ru",
        )
    refused(response, "Память заполнена")
    assert typed(response, "content") == "Writes Python"


# --- an edit of a note deleted meanwhile -------------------------------------------------------


@pytest.mark.parametrize(
    ("language", "message"),
    [
        ("en", "This note no longer exists: it was deleted elsewhere. What you typed is in the"),
        ("ru", "Этой заметки больше нет: её удалили в другом месте. Введённый текст — в"),
    ],
)
def test_an_edit_of_a_deleted_note_is_offered_as_a_new_note_with_what_was_typed(
    client, memory, ann, saved, language, message
):
    note = add(memory, ann, "Prefers tea", ("Drinks",))
    memory.delete_note(ann, note.id, note.version, source="person")
    saved.clear()
    data = change_data(note, content="Prefers green tea", categories="Drinks, Mornings")
    data["person"] = ann.pk
    response = client.post(
        f"{NOTES}{note.id}/change/", data, follow=True, HTTP_ACCEPT_LANGUAGE=language
    )
    assert response.redirect_chain[-1][0].endswith(f"{NOTES}add/")
    html = unescape(page(response))
    assert message in html
    assert typed(response, "content") == "Prefers green tea"
    assert typed(response, "categories") == "Drinks, Mornings"
    assert typed(response, "user") == str(ann.pk)
    assert_nothing_saved(ann, [], saved)
    # Kept once: the next add form is empty again.
    assert "Prefers green tea" not in page(client.get(f"{NOTES}add/"))
    response = client.post(
        f"{NOTES}add/",
        {"user": ann.pk, "categories": "Drinks, Mornings", "content": "Prefers green tea"},
    )
    assert response.status_code == 302
    assert list(MemoryNote.objects.filter(user=ann).values_list("content", flat=True)) == [
        "Prefers green tea"
    ]
