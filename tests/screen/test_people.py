"""The memory screen speaks to people: its own error texts, search and filter, export and import,
safe confirmations, and the host's page around it. Plain requests, no browser."""

from __future__ import annotations

import html
import json
import re

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import override_settings
from django.utils import translation

from agent_memory import LongTermMemory
from agent_memory.models import MemoryNote
from tests.screen.pages import HTMX, SCREEN, add, text


def field_errors(page: str) -> list[str]:
    found = re.findall(r'<p class="am-field-error"[^>]*>(.*?)</p>', page, re.S)
    return [html.unescape(item).strip() for item in found]


# --- errors written for people ----------------------------------------------------------------

#: One input per error kind the screen can meet when saving a note: (categories as typed,
#: content, settings, the field the message belongs beside, a word of the person's message).
CASES = {
    "content_too_long": ("Food", "x" * 674, {}, "content", "174"),
    "content_empty": ("Food", "   ", {}, "content", None),
    "content_unprintable": ("Food", "Likes\x07 tea", {}, "content", "U+0007"),
    "secret": ("Keys", "My password is hunter22!", {}, "content", None),
    "categories_count": ("A, B, C, D", "Likes tea", {}, "categories", "4"),
    "categories_none": ("", "Likes tea", {}, "categories", None),
    "category_too_long": ("A" * 61, "Likes tea", {}, "categories", "61"),
    "category_slash": ("Work/Tools", "Likes tea", {}, "categories", "Work, Tools"),
    "category_repeated": ("Food, food", "Likes tea", {}, "categories", None),
    "category_unprintable": ("Fo\x07od", "Likes tea", {}, "categories", "U+0007"),
    "category_secret": ("password: hunter22", "Likes tea", {}, "categories", None),
    "duplicate": ("Food", "Already saved.", {}, "content", "Food"),
    "too_many_notes": ("Music", "Plays cello", {"MAX_NOTES": 1}, None, "1"),
    "too_many_chars": ("Music", "Plays cello", {"MAX_TOTAL_CHARS": 20}, "content", "20"),
}

#: Phrases only a message for the model has.
MODEL_WORDING = re.compile(r'\bcontent\b|memory:\d|\["|you may say|Update memory|search', re.I)


@pytest.mark.parametrize("language", ["en", "ru"])
@pytest.mark.parametrize("case", list(CASES))
def test_screen_errors_are_written_for_people_not_the_tools_words(
    client, person, memory, case, language
):
    categories, content, limits, field, detail = CASES[case]
    add(memory, person, "Already saved.")
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = language
    with override_settings(AGENT_MEMORY={**settings.AGENT_MEMORY, **limits}):
        with translation.override(language):
            tool = LongTermMemory().call_tool(
                person,
                {
                    "action": "create",
                    "notes": [
                        {
                            "categories": [name.strip() for name in categories.split(",")]
                            if categories
                            else [],
                            "content": content,
                        }
                    ],
                },
            )
        response = client.post(SCREEN, {"categories": categories, "content": content})

    assert response.status_code == 400
    page = html.unescape(text(response))
    tool_message = tool["error"]["message"]
    errors = field_errors(text(response)) if field else []
    if field is None:
        errors = [
            html.unescape(item).strip()
            for item in re.findall(
                r'<div class="am-alert" role="alert"><p>(.*?)</p>', text(response)
            )
        ]
    assert len(errors) == 1, errors
    shown = errors[0]
    if field:
        error_id = re.search(r'<p class="am-field-error" id="([^"]+)"', text(response)).group(1)
        assert error_id == f"new-note-{field}-error"
    assert shown != tool_message
    assert tool_message not in page
    assert not MODEL_WORDING.search(shown), shown
    if detail and (language == "en" or detail.isdigit() or detail.startswith("U+")):
        assert detail in shown
    assert MemoryNote.objects.filter(user=person).count() == 1


def test_too_long_text_is_kept_whole_and_the_screen_says_how_much_to_cut(client, person):
    long_text = "word " * 120 + "end"  # 603 characters
    response = client.post(SCREEN, {"categories": "Food", "content": long_text})
    page = text(response)
    assert "maxlength" not in re.search(r"<textarea[^>]*new-note-content[^>]*>", page).group(0)
    assert f"{long_text}</textarea>" in page
    assert "Cut 103 characters" in html.unescape(page)
    assert "603 of 500 characters" in page  # the counter, without JavaScript


def test_every_content_limit_message_names_a_number_to_cut():
    from agent_memory.wording import too_long

    assert "Cut 1 character," in too_long(501, 500)
    with translation.override("ru"):
        assert "Сократите на 2 символа" in too_long(502, 500)


# --- escaping --------------------------------------------------------------------------------


def test_a_category_holding_html_is_escaped_everywhere_on_the_screen(client, person, memory):
    evil = "<img src=x onerror=alert(1)>"
    add(memory, person, "Likes tea", [evil, "Food"])
    for address in (SCREEN, f"{SCREEN}?category=Food", f"{SCREEN}?q=tea", f"{SCREEN}erase"):
        page = text(client.get(address))
        assert "<img src=x" not in page, address
        assert "&lt;img src=x onerror=alert(1)&gt;" in page, address


# --- search and filter -----------------------------------------------------------------------


def test_search_box_finds_a_note_by_a_word_from_its_text_like_the_tool(client, person, memory):
    add(memory, person, "Works at Acme as a designer", ["Work"])
    add(memory, person, "Likes green tea", ["Food"])
    add(memory, person, "Designs posters on weekends", ["Hobby"])
    page = text(client.get(SCREEN, {"q": "designer"}))
    listed = re.findall(r'class="am-note-text"[^>]*>([^<]+)<', page)
    ranked = [note.content for note in memory.search(person, "designer").notes]
    assert listed == ranked and "Likes green tea" not in listed
    assert "match “designer”" in html.unescape(page)


def test_htmx_search_answers_with_the_results_only(client, person, memory):
    add(memory, person, "Likes green tea", ["Food"])
    response = client.get(SCREEN, {"q": "tea"}, HTTP_HX_TARGET="am-results", **HTMX)
    page = text(response)
    assert "<html" not in page and 'id="am-results"' in page
    assert 'id="am-screen"' not in page and 'id="am-q"' in page
    assert "Likes green tea" in page


def test_category_filter_lists_the_notes_with_that_category(client, person, memory):
    add(memory, person, "Likes green tea", ["Food", "Drinks"])
    add(memory, person, "Works at Acme", ["Work"])
    page = text(client.get(SCREEN, {"category": "drinks"}))
    assert "Likes green tea" in page and "Works at Acme" not in page
    assert '<option value="Drinks" selected>' in page


def test_nothing_found_says_what_to_try(client, person, memory):
    add(memory, person, "Likes green tea", ["Food"])
    page = text(client.get(SCREEN, {"q": "submarine"}))
    assert "Nothing found." in page and "Likes green tea" not in page


def test_category_picker_suggests_the_persons_categories_and_keeps_their_spelling(
    client, person, memory
):
    add(memory, person, "Likes green tea", ["Preferences"])
    page = text(client.get(SCREEN))
    assert (
        '<datalist id="am-category-list"><option value="Preferences"></option></datalist>' in page
    )
    assert 'list="am-category-list"' in page
    client.post(SCREEN, {"categories": "preferences, Food", "content": "Likes jazz"})
    saved = MemoryNote.objects.get(user=person, content="Likes jazz")
    assert list(saved.categories) == ["Preferences", "Food"]


# --- export and import -----------------------------------------------------------------------


def upload(content: str | bytes, name: str = "memory.json") -> SimpleUploadedFile:
    data = content.encode() if isinstance(content, str) else content
    return SimpleUploadedFile(name, data, content_type="application/octet-stream")


def test_download_then_erase_then_import_gives_back_the_same_notes(client, person, memory):
    add(memory, person, "Likes green tea", ["Food", "Drinks"])
    add(memory, person, "Works at Acme", ["Work"])
    before = sorted((tuple(n.categories), n.content) for n in memory.notes(person))
    download = client.get(f"{SCREEN}export")
    assert download["Content-Disposition"].startswith('attachment; filename="memory-')
    assert json.loads(download.content)["version"] == 1

    client.post(f"{SCREEN}erase", {"total": "2"})
    assert memory.notes(person) == []
    response = client.post(f"{SCREEN}import", {"file": upload(download.content)})
    assert response.status_code == 200
    assert "Imported 2 notes." in text(response)
    assert sorted((tuple(n.categories), n.content) for n in memory.notes(person)) == before


def test_import_lists_the_notes_it_skipped(client, person, memory):
    add(memory, person, "Likes green tea", ["Imported"])
    response = client.post(
        f"{SCREEN}import", {"file": upload("Likes green tea\nWalks at 7\n", "notes.txt")}
    )
    page = html.unescape(text(response))
    assert "Imported 1 note." in page and "1 note was skipped:" in page
    assert "Likes green tea</span> — Already saved (categories: Imported)." in page


def test_import_with_a_bad_note_writes_nothing_and_says_which_one_beside_the_file(
    client, person, memory
):
    add(memory, person, "Likes green tea", ["Food"])
    response = client.post(
        f"{SCREEN}import",
        {"file": upload("Walks at 7\nMy password is hunter22!\n", "notes.txt"), "categories": "Me"},
    )
    assert response.status_code == 400
    (error,) = field_errors(text(response))
    assert error.startswith("Note 2 in the file: This looks like a password")
    assert not MODEL_WORDING.search(error)
    assert [note.content for note in memory.notes(person)] == ["Likes green tea"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"notes": [', "This file can’t be read."),
        ('{"format": "agent_memory", "version": 9, "notes": []}', "made by a newer version"),
        (b"\xff\xfe\x00\x01", "The file is not plain text."),
        ("\n\n", "The file has no notes in it."),
    ],
)
def test_a_file_that_cannot_be_imported_says_why(client, person, content, message):
    response = client.post(f"{SCREEN}import", {"file": upload(content)})
    assert response.status_code == 400
    assert message in " ".join(field_errors(text(response)))
    assert MemoryNote.objects.filter(user=person).count() == 0


def test_opening_the_import_address_leads_back_to_the_import_form(client, person):
    response = client.get(f"{SCREEN}import")
    assert response.status_code == 302 and response["Location"] == f"{SCREEN}#am-transfer"


# --- confirmations ---------------------------------------------------------------------------


def test_confirmations_focus_the_safe_button(client, person, memory):
    note = add(memory, person, "Likes green tea")
    for address in (f"/memory/notes/{note.id}/delete", f"{SCREEN}erase"):
        page = text(client.get(address))
        focused = re.findall(r"<(?:a|button)\b[^>]*\bautofocus\b[^>]*>([^<]*)<", page)
        assert focused in (["Keep it"], ["Keep my memory"]), (address, focused)


# --- the host's page around the screen -------------------------------------------------------


def test_screen_renders_inside_the_hosts_base_template_keeping_its_navigation(client, person):
    page = text(client.get(SCREEN))
    assert 'class="topbar"' in page and "Log out" in page and 'name="language"' in page
    assert 'id="am-screen"' in page
    assert page.count("memory.css") == 1 and page.count("htmx.min.js") == 1


def test_the_screen_shows_a_message_once_itself_and_empties_the_hosts_messages_block(
    client, person
):
    client.post(SCREEN, {"categories": "Food", "content": "Likes green tea"})
    page = text(client.get(SCREEN))
    assert page.count("Note saved.") == 1
    assert '<ul class="messages">' not in page  # the host's block (tests/templates/base.html)


def test_staff_keep_the_admin_link_on_the_memory_screen(client, person):
    person.is_staff = True
    person.save()
    assert '<a href="/admin/">Admin</a>' in text(client.get(SCREEN))


def test_without_a_base_template_the_screen_has_its_own_page(client, person):
    with override_settings(AGENT_MEMORY={}):
        page = text(client.get(SCREEN))
    assert 'class="topbar"' not in page
    assert "Skip to your notes" in page and 'id="am-screen"' in page
    assert page.count("htmx.min.js") == 1
