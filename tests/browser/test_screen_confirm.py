"""Revert asks first, and a refused note shows every error at once, in Chromium.

On a desktop (1280×800) and a phone (390×844), in English and Russian, with htmx and without
JavaScript: the revert confirmation opens in the group's place, in view, with the focus on
"Keep the merge", and reverts only when confirmed; a note refused for several reasons lists all
of them, the focus goes to the first field in error, a duplicate links to the note that holds
the text, and an error goes once the person changes that field.
"""

from __future__ import annotations

from typing import Any

import pytest

from agent_memory import LongTermMemory
from tests.browser.test_screen import contents, note_action, row
from tests.browser.test_screen_landing import (
    assert_in_view,
    merge_tea_and_sugar,
    person_with_notes,
    screen_opener,
    settled,
)

expect = pytest.importorskip(
    "playwright.sync_api", reason="Playwright is not installed: pip install playwright"
).expect

WORDS = {
    "en": {
        "revert": "Revert…",
        "ask": "Revert this merge?",
        "keep": "Keep the merge",
        "confirm": "Revert the merge",
        "reverted": "Merge reverted",
        "add": "Add note",
        "empty": "Write what the agent should remember.",
        "no_category": "Give the note a category",
        "duplicate": "already saved in another note",
        "show": "Show that note",
        "save": "Save",
        "too_many": "up to 3 categories",
    },
    "ru": {
        "revert": "Отменить объединение…",
        "ask": "Отменить объединение?",
        "keep": "Оставить объединение",
        "confirm": "Отменить объединение",
        "reverted": "Объединение отменено",
        "add": "Добавить заметку",
        "empty": "Напишите, что агенту нужно запомнить.",
        "no_category": "Укажите категорию заметки",
        "duplicate": "уже сохранён в другой заметке",
        "show": "Показать эту заметку",
        "save": "Сохранить",
        "too_many": "не больше 3 категорий",
    },
}


@pytest.fixture
def person(transactional_db):
    return person_with_notes(
        "dora",
        20,
        lambda index: {"categories": ["Home"], "content": f"Fact number {index} about Dora's home"},
    )


@pytest.fixture(params=["en", "ru"])
def language(request) -> str:
    return request.param


@pytest.fixture
def open_screen(new_context, live_server, person, js, viewport, language):
    return screen_opener(new_context, live_server, person, js, viewport, language)


@pytest.fixture
def group(person) -> str:
    """The merged tea group's selector: two notes merged before the screen opens."""
    return f"#merge-{merge_tea_and_sugar(person)}-group-0"


def open_add_form(page: Any) -> None:
    """Unfold the add form (a phone shows it folded)."""
    if not page.locator("details.am-add-details[open]").count():
        page.locator(".am-add-summary").click()


def focused_id(page: Any) -> str:
    return str(page.evaluate("() => document.activeElement && document.activeElement.id"))


def expect_focus(page: Any, element_id: str) -> None:
    """The focus reaches the element ``element_id`` (htmx settles a swap a moment later)."""
    try:
        page.wait_for_function(
            "id => document.activeElement && document.activeElement.id === id",
            arg=element_id,
            timeout=3000,
        )
    except Exception:
        pass
    assert focused_id(page) == element_id


def assert_top_in_view(page: Any, locator: Any) -> None:
    """The focused field's top is in the window: without JavaScript the browser's autofocus
    scrolls no further than that (with htmx the screen scrolls the whole field into view)."""
    settled(page)
    box = locator.bounding_box()
    assert box is not None
    assert -1 < box["y"] < page.viewport_size["height"] - 16, box


def focused_text(page: Any) -> str:
    return str(page.evaluate("() => document.activeElement && document.activeElement.innerText"))


def test_revert_asks_first_and_keep_the_merge_changes_nothing(open_screen, person, group, language):
    words = WORDS[language]
    page = open_screen()

    page.locator(group).get_by_role("link", name=words["revert"]).click()

    confirm = page.locator(f"{group} .am-confirm")
    expect(confirm).to_contain_text(words["ask"])
    assert_in_view(page, confirm, "revert-confirm" if language == "en" else "")
    assert focused_text(page).strip() == words["keep"]
    assert "Prefers tea, no sugar" in contents(person) and "Prefers tea" not in contents(person)

    page.locator(group).get_by_role("link", name=words["keep"]).click()

    expect(page.locator(f"{group} .am-confirm")).to_have_count(0)
    revert = page.locator(group).get_by_role("link", name=words["revert"])
    expect(revert).to_be_visible()
    assert_in_view(page, page.locator(group))
    assert "Prefers tea, no sugar" in contents(person)

    revert.click()
    page.locator(group).get_by_role("button", name=words["confirm"]).click()

    message = page.locator("#am-merges .am-messages")
    expect(message).to_contain_text(words["reverted"])
    assert_in_view(page, message)
    assert "Prefers tea" in contents(person) and "Prefers tea, no sugar" not in contents(person)


def test_a_refused_note_shows_every_error_and_focuses_the_first(open_screen, language, js):
    words = WORDS[language]
    page = open_screen()
    add = page.locator(".am-editor--add")
    open_add_form(page)

    add.get_by_role("button", name=words["add"]).click()

    expect(page.locator("#new-note-content-error")).to_contain_text(words["empty"])
    expect(page.locator("#new-note-categories-error")).to_contain_text(words["no_category"])
    expect_focus(page, "new-note-content")
    assert_top_in_view(page, page.locator("#new-note-content"))


def test_an_error_on_the_categories_takes_the_focus_there(open_screen, person, language):
    words = WORDS[language]
    (note,) = LongTermMemory().create_notes(
        person, [{"categories": ["Zoo"], "content": "Feeds the cat at six"}]
    )
    page = open_screen()
    note_action(page, note.id, "Edit" if language == "en" else "Изменить")
    # The editor focuses its text box once htmx settles, and the screen lands on it in a task
    # after that: wait for both, or typing could land there.
    expect_focus(page, f"note-{note.id}-content")
    settled(page)
    categories = page.locator(f"#note-{note.id}-categories")
    categories.fill("A, B, C, D")

    row(page, note.id).get_by_role("button", name=words["save"], exact=True).click()

    error = page.locator(f"#note-{note.id}-categories-error")
    expect(error).to_contain_text(words["too_many"])
    expect(page.locator(f"#note-{note.id}-content-error")).to_have_count(0)
    expect_focus(page, f"note-{note.id}-categories")
    assert_top_in_view(page, categories)


def test_a_duplicate_links_to_the_note_and_goes_when_the_text_changes(
    open_screen, person, language, js
):
    words = WORDS[language]
    (tea,) = LongTermMemory().create_notes(
        person, [{"categories": ["Zoo"], "content": "Prefers green tea"}]
    )
    page = open_screen()
    open_add_form(page)
    page.locator("#new-note-content").fill("prefers GREEN tea")
    page.locator("#new-note-categories").fill("zoo")

    page.locator(".am-editor--add").get_by_role("button", name=words["add"]).click()

    error = page.locator("#new-note-content-error")
    expect(error).to_contain_text(words["duplicate"])
    link = error.get_by_role("link", name=words["show"])
    expect(link).to_have_attribute("href", f"/memory/#note-{tea.id}")
    expect_focus(page, "new-note-content")
    if js:
        page.locator("#new-note-content").press_sequentially(" with milk")
        expect(page.locator("#new-note-content-error")).to_have_count(0)
        expect(page.locator("#new-note-content")).not_to_have_attribute("aria-invalid", "true")
    link_page = page
    if not js:
        link.click()
        assert_in_view(link_page, row(link_page, tea.id))


def test_escape_in_the_revert_confirmation_keeps_the_merge(
    open_screen, person, group, language, js
):
    if not js:
        pytest.skip("Escape is the screen's script; without it the safe link is focused")
    words = WORDS[language]
    page = open_screen()
    page.locator(group).get_by_role("link", name=words["revert"]).click()
    expect(page.locator(f"{group} .am-confirm")).to_be_visible()
    # A person presses Escape once htmx has settled the swap (it drops a request sent sooner).
    page.wait_for_function("() => !document.querySelector('.htmx-settling, .htmx-request')")

    page.keyboard.press("Escape")

    expect(page.locator(f"{group} .am-confirm")).to_have_count(0)
    expect(page.locator(group).get_by_role("link", name=words["revert"])).to_be_visible()
    assert "Prefers tea, no sugar" in contents(person)


def test_the_editor_grows_with_its_text(open_screen, person, language):
    (note,) = LongTermMemory().create_notes(
        person, [{"categories": ["Zoo"], "content": "Feeds the cat"}]
    )
    page = open_screen()
    note_action(page, note.id, "Edit" if language == "en" else "Изменить")
    text = page.locator(f"#note-{note.id}-content")
    before = text.bounding_box()["height"]

    text.fill("\n".join(f"Line {index} of what to remember" for index in range(8)))

    settled(page)
    assert text.bounding_box()["height"] > before + 40


def test_a_merged_notes_marker_leads_to_its_merge(open_screen, group, language):
    run = group.removesuffix("-group-0")
    page = open_screen()
    merged = page.locator(".am-note", has_text="Prefers tea, no sugar")
    marker = merged.locator(".am-tag--merged")
    expect(marker).to_have_attribute("href", run)

    marker.click()

    assert_in_view(page, page.locator(f"{run}-title"))
