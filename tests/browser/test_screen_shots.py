"""Screenshots of the memory screen for the documentation (docs/screenshots/, linked from README).

Each shot is also a check: the page shows what the picture is meant to document.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import override_settings

from agent_memory.prompt import blocks

from .test_screen import add, log_in, make_merge, open_menu

expect = pytest.importorskip(
    "playwright.sync_api", reason="Playwright is not installed: pip install playwright"
).expect

NOTES = {
    "en": [
        (("Preferences", "Language"), "Address me informally, by my first name.", "person"),
        (("Preferences",), "Prefers short answers with a code example first.", "agent"),
        (("Work", "Tools"), "Uses Django 5.2 and PostgreSQL 16 at work.", "agent"),
        (("Work",), "Don't suggest npm: the team uses pnpm.", "agent"),
        (("Food",), "Vegetarian; allergic to peanuts.", "person"),
        (("Travel",), "Flies from Lisbon; prefers aisle seats.", "agent"),
    ],
    "ru": [
        (("Предпочтения", "Язык"), "Обращаться на «ты», по имени.", "person"),
        (("Предпочтения",), "Любит короткие ответы, сначала пример кода.", "agent"),
        (("Работа", "Инструменты"), "На работе Django 5.2 и PostgreSQL 16.", "agent"),
        (("Работа",), "Не предлагать npm: в команде pnpm.", "agent"),
        (("Еда",), "Вегетарианец, аллергия на арахис.", "person"),
        (("Поездки",), "Летает из Лиссабона, любит места у прохода.", "agent"),
    ],
}
MERGES = {
    "en": (("Coffee", "Drinks"), ["Drinks coffee without sugar.", "Likes flat white."]),
    "ru": (("Кофе", "Напитки"), ["Пьёт кофе без сахара.", "Любит флэт уайт."]),
}
MERGED = {
    "en": "Likes flat white, without sugar.",
    "ru": "Любит флэт уайт, без сахара.",
}


@pytest.fixture
def person(transactional_db):
    return get_user_model().objects.create_user(username="maria", password="pw-for-tests")


def fill_memory(person: Any, language: str) -> None:
    categories, originals = MERGES[language]
    sources = [add(person, text, categories) for text in originals]
    make_merge(person, sources, MERGED[language], categories)
    for note_categories, content, source in NOTES[language]:
        add(person, content, note_categories, source=source)


def block_limit_hiding(person: Any, hidden: int) -> int:
    """A ``MAX_BLOCK_CHARS`` at which exactly ``hidden`` of the person's notes do not fit."""
    from agent_memory import LongTermMemory

    notes = LongTermMemory().notes(person)
    for limit in range(20_000, 0, -10):
        if sum(block.hidden for block in blocks(notes, limit)) == hidden:
            return limit
    raise AssertionError("no limit hides that many notes")


def shoot(page: Any, folder: Any, name: str) -> None:
    page.screenshot(path=str(folder / name), full_page=True)


@pytest.mark.parametrize(
    ("language", "locale", "overflow_text", "merged_title"),
    [
        ("en", "en-US", "The agent sees 5 of 7 notes", "Merged"),
        ("ru", "ru-RU", "Агент видит 5 из 7 заметок", "Объединённые"),
    ],
    ids=["en", "ru"],
)
def test_screenshots_with_notes_overflow_and_a_merge(
    new_context, live_server, person, screenshots, language, locale, overflow_text, merged_title
):
    fill_memory(person, language)
    context = new_context(locale=locale, viewport={"width": 1100, "height": 900})
    log_in(context, live_server, person)
    page = context.new_page()
    with override_settings(AGENT_MEMORY={"MAX_BLOCK_CHARS": block_limit_hiding(person, 2)}):
        page.goto(f"{live_server.url}/memory/")
        expect(page.locator("#am-overflow")).to_contain_text(overflow_text)
        expect(page.locator("#am-merges h2")).to_have_text(merged_title)
        expect(page.locator(".am-badge")).to_have_count(2)
        shoot(page, screenshots, f"memory-screen-{language}.png")

        first = page.locator(".am-note").first
        open_menu(first)
        first.get_by_role("link", name="Edit" if language == "en" else "Изменить").click()
        expect(first.locator("textarea")).to_be_focused()
        first.screenshot(path=str(screenshots / f"edit-in-place-{language}.png"))

    mobile = new_context(locale=locale, viewport={"width": 390, "height": 844}, is_mobile=True)
    log_in(mobile, live_server, person)
    phone = mobile.new_page()
    phone.goto(f"{live_server.url}/memory/")
    assert phone.evaluate("document.documentElement.scrollWidth") <= 390
    shoot(phone, screenshots, f"memory-screen-phone-{language}.png")


def test_screenshots_of_the_empty_screen_and_the_erase_confirmation(
    new_context, live_server, person, screenshots
):
    context = new_context(viewport={"width": 1100, "height": 700})
    log_in(context, live_server, person)
    page = context.new_page()
    page.goto(f"{live_server.url}/memory/")
    expect(page.locator("#am-empty")).to_be_visible()
    shoot(page, screenshots, "memory-empty-en.png")

    fill_memory(person, "en")
    page.goto(f"{live_server.url}/memory/erase")
    expect(page.locator(".am-loss-list")).to_contain_text("all 7 notes")
    expect(page.locator(".am-loss-list")).to_contain_text("1 automatic merge you could still")
    shoot(page, screenshots, "erase-all-en.png")
