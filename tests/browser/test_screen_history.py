"""The memory screen in Chromium: after the assistant edits a note the person wrote, the screen
says who changed it, and Undo brings the old text back; in English and in Russian."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from agent_memory import LongTermMemory
from agent_memory.models import MemoryNote

from .test_screen import add, log_in, open_memory_screen, row

expect = pytest.importorskip(
    "playwright.sync_api", reason="Playwright is not installed: pip install playwright"
).expect

WORDS = {
    "en-US": {
        "changed": "Changed by the assistant",
        "who": "Written by you",
        "undo": "Undo",
        "done": "Undone: the note is back to its earlier text.",
    },
    "ru-RU": {
        "changed": "Изменена ассистентом",
        "who": "Написана вами",
        "undo": "Отменить",
        "done": "Отменено: у заметки снова прежний текст.",
    },
}


@pytest.fixture
def person(transactional_db):
    return get_user_model().objects.create_user(username="ann", password="pw-for-tests")


@pytest.mark.parametrize("locale", list(WORDS))
@pytest.mark.parametrize("js", [True, False], ids=["htmx", "no-js"])
def test_undo_of_the_assistants_edit_brings_the_persons_text_back(
    new_context, live_server, person, locale, js
):
    words = WORDS[locale]
    note = add(person, "Prefers tea in the morning", source="person")
    LongTermMemory().call_tool(
        person,
        {
            "action": "update",
            "id": note.key,
            "version": 1,
            "categories": ["Food"],
            "content": "Prefers coffee in the morning",
        },
    )
    context = new_context(java_script_enabled=js, locale=locale)
    log_in(context, live_server, person)
    page = open_memory_screen(context, live_server, js)

    expect(row(page, note.id).locator(".am-note-text")).to_have_text(
        "Prefers coffee in the morning"
    )
    expect(row(page, note.id).locator(".am-note-changed-by")).to_contain_text(words["changed"])
    expect(row(page, note.id).locator(".am-note-provenance")).to_contain_text(words["who"])
    row(page, note.id).get_by_role("button", name=words["undo"]).click()

    expect(row(page, note.id).locator(".am-note-text")).to_have_text("Prefers tea in the morning")
    expect(page.locator(".am-messages")).to_contain_text(words["done"])
    expect(row(page, note.id).locator(".am-note-changed-by")).to_have_count(0)
    saved = MemoryNote.objects.get(pk=note.id)
    assert (saved.content, saved.version, saved.source, saved.created_by) == (
        "Prefers tea in the morning",
        3,
        "person",
        "person",
    )
