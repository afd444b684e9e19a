"""The person's controls on the memory screen, without JavaScript (plain forms) and with htmx:
the memory switch, and pinning and unpinning notes."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.utils import translation

from agent_memory import LongTermMemory
from tests.screen.pages import HTMX, SCREEN, add, text

pytestmark = pytest.mark.django_db


def section(html: str, element_id: str) -> str:
    """The HTML of the element with ``element_id`` up to its closing section tag."""
    start = html.index(f'id="{element_id}"')
    return html[start : html.index("</section>", start)]


# --- the switch ---------------------------------------------------------------------------------


def test_the_screen_says_memory_is_on_and_what_off_would_mean(client, person):
    html = text(client.get(SCREEN))
    assert 'role="switch" aria-checked="true"' in html
    assert "Memory is on" in html
    assert "it neither sees nor saves notes; your notes stay here" in html


def test_turning_memory_off_without_javascript_keeps_the_notes(client, person, memory):
    note = add(memory, person, "Likes green tea.")
    response = client.post("/memory/switch", {"enabled": "0"})
    assert response.status_code == 302 and response["Location"].endswith("#am-switch")
    assert not memory.enabled(person)
    html = text(client.get(SCREEN))
    assert 'aria-checked="false"' in html and "Memory is off" in html
    assert "The agent neither sees nor saves notes" in html  # the message after the change
    assert note.content in html  # the notes stay, editable
    assert f"/memory/notes/{note.id}/edit" in html
    assert client.get("/memory/export").status_code == 200
    client.post("/memory/switch", {"enabled": "1"})
    assert memory.enabled(person)


def test_the_switch_with_htmx_answers_the_screen_in_place(client, person, memory):
    response = client.post("/memory/switch", {"enabled": "0"}, **HTMX)
    assert response.status_code == 200
    assert response["HX-Retarget"] == "#am-screen"
    assert 'aria-checked="false"' in text(response)


def test_the_switch_needs_a_post_with_csrf(person, user):
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(user)
    assert strict.post("/memory/switch", {"enabled": "0"}).status_code == 403
    assert strict.get("/memory/switch").status_code == 405
    assert LongTermMemory().enabled(user)


def test_the_switch_speaks_russian(client, person):
    with translation.override("ru"):
        html = text(client.get(SCREEN, HTTP_ACCEPT_LANGUAGE="ru"))
    assert "Память включена" in html


# --- pins ---------------------------------------------------------------------------------------


def test_pinned_notes_are_listed_apart_first_with_a_marker(client, person, memory):
    add(memory, person, "Likes green tea.")
    rule = add(memory, person, "Never suggest npm.", ("Rules",), source="person", pinned=True)
    html = text(client.get(SCREEN))
    pinned = section(html, "am-pinned")
    assert rule.content in pinned and "Likes green tea." not in pinned
    assert html.index('id="am-pinned"') < html.index("Likes green tea.")
    row = html[html.index(f'id="note-{rule.id}"') :]
    assert "am-badge--pinned" in row[: row.index("</li>")]


def test_pin_and_unpin_from_the_notes_menu_without_javascript(client, person, memory):
    note = add(memory, person, "Never suggest npm.", ("Rules",))
    html = text(client.get(SCREEN))
    form = re.search(rf'action="/memory/notes/{note.id}/pin".*?</form>', html, re.S)
    assert form and 'name="pinned" value="1"' in form.group(0)
    assert "Pin</button>" in form.group(0)
    response = client.post(f"/memory/notes/{note.id}/pin", {"version": "1", "pinned": "1"})
    assert response.status_code == 302 and response["Location"].endswith(f"#note-{note.id}")
    assert memory.note(person, note.id).pinned
    html = text(client.get(SCREEN))
    assert "cannot change it" in html  # the message after the change
    assert "Unpin</button>" in html
    client.post(f"/memory/notes/{note.id}/pin", {"version": "2", "pinned": "0"})
    assert not memory.note(person, note.id).pinned


def test_a_stale_pin_says_the_note_changed_and_changes_nothing(client, person, memory):
    note = add(memory, person, "Never suggest npm.", ("Rules",))
    memory.update_note(person, note.id, 1, ["Rules"], "Never suggest yarn.")
    client.post(f"/memory/notes/{note.id}/pin", {"version": "1", "pinned": "1"})
    assert not memory.note(person, note.id).pinned
    assert "This note changed elsewhere" in text(client.get(SCREEN))


def test_pinning_too_much_says_so_in_the_persons_words(client, person, memory, settings):
    settings.AGENT_MEMORY = {"MAX_BLOCK_CHARS": 400}
    add(memory, person, "a" * 80, ("Rules",), source="person", pinned=True)
    note = add(memory, person, "b" * 120, ("Rules",))
    client.post(f"/memory/notes/{note.id}/pin", {"version": "1", "pinned": "1"})
    assert not memory.note(person, note.id).pinned
    html = text(client.get(SCREEN))
    assert "Shorten a pinned note or unpin one" in html
    assert "MAX_BLOCK_CHARS" not in html


def test_the_person_edits_and_deletes_a_pinned_note_on_the_screen(client, person, memory):
    note = add(memory, person, "Never suggest npm.", ("Rules",), source="person", pinned=True)
    client.post(
        f"/memory/notes/{note.id}/edit",
        {"version": "1", "categories": "Rules", "content": "Never suggest yarn."},
    )
    edited = memory.note(person, note.id)
    assert (edited.content, edited.pinned) == ("Never suggest yarn.", True)
    client.post(f"/memory/notes/{note.id}/delete", {"version": str(edited.version)})
    assert memory.notes(person) == []


def test_another_persons_note_cannot_be_pinned(client, person, memory, other_user):
    note = add(memory, other_user, "Someone else's rule.")
    client.post(f"/memory/notes/{note.id}/pin", {"version": "1", "pinned": "1"})
    assert not memory.note(other_user, note.id).pinned


def test_pins_speak_russian(client, person, memory):
    add(memory, person, "Обращайся на ты.", ("Правила",), source="person", pinned=True)
    with translation.override("ru"):
        html = text(client.get(SCREEN, HTTP_ACCEPT_LANGUAGE="ru"))
    assert "Закреплённые" in html and "Открепить" in html
