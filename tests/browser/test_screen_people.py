"""The memory screen as a person meets it, in Chromium at desktop and phone width, in English and
Russian: each defect once found on it is checked here, plus search and export → erase → import.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_memory import LongTermMemory
from agent_memory.models import MemoryNote

from .test_screen import add, log_in, note_action, open_memory_screen, open_menu, row

expect = pytest.importorskip(
    "playwright.sync_api", reason="Playwright is not installed: pip install playwright"
).expect

WIDTHS = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}
WORDS = {
    "en": {
        "add": "Add note",
        "keep": "Keep it",
        "log_out": "Log out",
        "edit": "Edit",
        "delete": "Delete",
        "erase": "Erase all memory…",
        "erase_all": "Erase all 2 notes",
        "import": "Import notes",
    },
    "ru": {
        "add": "Добавить заметку",
        "keep": "Оставить",
        "log_out": "Выйти",
        "edit": "Изменить",
        "delete": "Удалить",
        "erase": "Стереть всю память…",
        "erase_all": "Стереть все 2 заметки",
        "import": "Импортировать заметки",
    },
}
COMBINATIONS = [("desktop", "en"), ("phone", "ru"), ("desktop", "ru"), ("phone", "en")]


@pytest.fixture
def person(transactional_db):
    from django.contrib.auth import get_user_model

    return get_user_model().objects.create_user(username="ann", password="pw-for-tests")


@pytest.fixture
def visit(new_context, live_server, person):
    """Open the memory screen at a width, in a language, with JavaScript (or without)."""

    def open_screen(width: str, language: str, js: bool = True, **options: Any) -> Any:
        context = new_context(
            viewport=WIDTHS[width],
            is_mobile=width == "phone",
            locale=f"{language}-{language.upper()}",
            java_script_enabled=js,
            **options,
        )
        log_in(context, live_server, person)
        return open_memory_screen(context, live_server, js)

    return open_screen


def no_sideways_scroll(page: Any) -> None:
    width = page.evaluate("window.innerWidth")
    assert page.evaluate("document.documentElement.scrollWidth") <= width


@pytest.mark.parametrize(("width", "language"), COMBINATIONS, ids=lambda value: value)
def test_screen_defects_stay_fixed(visit, person, width, language):
    words = WORDS[language]
    tea = add(person, "Prefers green tea", ("Preferences",))
    work = add(person, "Works at Acme as a designer", ("Work", "Design"))
    page = visit(width, language)

    # The site's navigation stays on the memory screen.
    # The language switcher: one button per language on one line, the current one pressed.
    languages = page.locator("header.topbar button[name=language]")
    expect(languages).to_have_count(2)
    tops = {round(button.bounding_box()["y"]) for button in languages.all()}
    assert len(tops) == 1, "the language buttons do not wrap"
    expect(page.locator("header.topbar button[aria-pressed=true]")).to_have_count(1)
    expect(page.get_by_role("button", name=words["log_out"])).to_be_visible()

    # One compact line per note: its text, category chips and one menu button; no cards of
    # full-width buttons.
    for note in (tea, work):
        line = row(page, note.id)
        # Its group's heading names the first category: the chips are the others.
        expect(line.locator(".am-tag")).to_have_count(len(note.categories) - 1)
        expect(line.locator("button:visible, a.am-button:visible, summary:visible")).to_have_count(
            1
        )
        # One line of text on a desktop; on a phone the chips may wrap under it.
        assert line.bounding_box()["height"] < (60 if width == "desktop" else 90)
    no_sideways_scroll(page)

    # Categories are suggested from the person's own.
    page.locator(".am-add-summary").click()
    options = page.locator("#am-category-list option")
    expect(options).to_have_count(3)

    # Long text is never cut; the count is live and the server says how much to cut, in words
    # for a person, beside the text.
    text = page.locator("#new-note-content")
    text.fill("x" * 674)
    expect(text).to_have_value("x" * 674)
    expect(page.locator("#new-note-content-count")).to_contain_text("674")
    expect(page.locator("#new-note-content-count")).to_contain_text("174")
    page.locator("#new-note-categories").fill("Preferences")
    page.get_by_role("button", name=words["add"], exact=True).click()
    error = page.locator("#new-note-content-error")
    expect(error).to_contain_text("174")
    expect(error).not_to_contain_text("content")
    expect(page.locator("#new-note-content")).to_have_value("x" * 674)

    # A message from one action is gone when the next one starts.
    page.locator("#new-note-content").fill("Likes jazz")
    page.get_by_role("button", name=words["add"], exact=True).click()
    expect(page.locator(".am-messages")).to_be_visible()
    note_action(page, tea.id, words["edit"])
    expect(page.locator(".am-messages")).to_have_count(0)

    # Escape cancels the editor.
    expect(row(page, tea.id).locator("textarea")).to_be_focused()
    page.keyboard.press("Escape")
    expect(row(page, tea.id).locator(".am-note-text")).to_have_text("Prefers green tea")

    # The delete confirmation focuses the safe button: Enter keeps the note; so does Escape.
    note_action(page, tea.id, words["delete"])
    keep = row(page, tea.id).get_by_role("link", name=words["keep"])
    expect(keep).to_be_focused()
    page.keyboard.press("Enter")
    expect(row(page, tea.id).locator(".am-note-text")).to_have_text("Prefers green tea")
    note_action(page, tea.id, words["delete"])
    expect(row(page, tea.id).get_by_role("link", name=words["keep"])).to_be_focused()
    page.keyboard.press("Escape")
    expect(row(page, tea.id).locator(".am-note-text")).to_have_text("Prefers green tea")
    assert MemoryNote.objects.filter(pk=tea.id).exists()
    no_sideways_scroll(page)


@pytest.mark.parametrize(
    ("width", "language", "js"),
    [("desktop", "en", True), ("phone", "ru", False)],
    ids=["desktop-en-htmx", "phone-ru-no-js"],
)
def test_search_box_finds_a_note_by_a_word_from_its_text(
    visit, person, screenshots, width, language, js
):
    add(person, "Prefers green tea in the morning", ("Food",))
    designer = add(person, "Works at Acme as a designer", ("Work",))
    add(person, "Вечером читает фантастику", ("Книги",))
    page = visit(width, language, js)
    page.locator("#am-q").fill("designer")
    if not js:
        page.locator("#am-q").press("Enter")
    expect(page.locator("#am-results .am-note")).to_have_count(1)
    expect(row(page, designer.id)).to_be_visible()
    expect(page.locator("#am-found")).to_contain_text("designer")
    assert page.url.endswith("?q=designer&category=") or "q=designer" in page.url
    if width == "desktop":
        page.locator("#am-notes").screenshot(
            path=str(screenshots / f"memory-search-{language}.png")
        )

    page.locator("#am-q").fill("фантастика")
    if not js:
        page.locator("#am-q").press("Enter")
    expect(page.locator("#am-results .am-note")).to_have_count(1)
    expect(page.locator("#am-results .am-note-text")).to_have_text("Вечером читает фантастику")


@pytest.mark.parametrize(("width", "language"), [("desktop", "en"), ("phone", "ru")])
def test_download_erase_and_import_give_back_the_same_notes(
    visit, person, tmp_path, screenshots, width, language
):
    words = WORDS[language]
    add(person, "Prefers green tea", ("Food", "Drinks"))
    add(person, "Works at Acme", ("Work",))
    before = sorted((tuple(n.categories), n.content) for n in LongTermMemory().notes(person))
    page = visit(width, language, accept_downloads=True)

    with page.expect_download() as waiting:
        page.locator("#am-export").click()
    saved = tmp_path / "memory.json"
    waiting.value.save_as(saved)
    assert len(json.loads(saved.read_text())["notes"]) == 2

    # The erase confirmation focuses "Keep my memory"; Escape keeps it too.
    page.get_by_role("link", name=words["erase"]).click()
    expect(page.locator(".am-confirm--erase [data-am-cancel]")).to_be_focused()
    page.keyboard.press("Escape")
    expect(page.locator("#am-notes")).to_be_visible()
    page.get_by_role("link", name=words["erase"]).click()
    page.get_by_role("button", name=words["erase_all"]).click()
    expect(page.locator("#am-empty")).to_be_visible()
    assert LongTermMemory().notes(person) == []

    add(person, "Works at Acme", ("Work",))  # saved again meanwhile: skipped, and listed
    page.reload()
    page.locator("#import-file").set_input_files(str(saved))
    page.get_by_role("button", name=words["import"]).click()
    result = page.locator("#am-import-result")
    expect(result).to_contain_text("1")
    expect(result.locator(".am-skipped li")).to_have_count(1)
    expect(result.locator(".am-skipped li")).to_contain_text("Works at Acme")
    after = sorted((tuple(n.categories), n.content) for n in LongTermMemory().notes(person))
    assert after == before
    if width == "desktop":
        page.locator("#am-transfer").screenshot(
            path=str(screenshots / f"memory-import-{language}.png")
        )
    no_sideways_scroll(page)


def test_compact_list_screenshot(visit, person, screenshots):
    for categories, content in [
        (("Preferences", "Language"), "Address me informally, by my first name."),
        (("Preferences",), "Prefers short answers with a code example first."),
        (("Work", "Tools"), "Uses Django 5.2 and PostgreSQL 16 at work."),
        (("Work",), "Don't suggest npm: the team uses pnpm."),
        (("Food",), "Vegetarian; allergic to peanuts."),
    ]:
        add(person, content, categories)
    page = visit("desktop", "en")
    work = MemoryNote.objects.get(content__startswith="Uses Django")
    open_menu(row(page, work.id))
    expect(row(page, work.id).locator(".am-menu-panel")).to_be_visible()
    page.screenshot(path=str(screenshots / "memory-list-en.png"), full_page=True)
