"""The person's controls in Chromium: the memory switch on the memory screen (English and
Russian, with and without JavaScript), pinning from a note's menu, and a temporary chat in the
example whose facts are not recalled later and never reach the memory screen."""

from __future__ import annotations

import re
from typing import Any

import pytest

from agent_memory import LongTermMemory
from example_project.chat.models import Chat
from example_project.tests.browser.test_example_chat import last_answer, log_in, new_chat, say
from tests.browser.test_screen import add
from tests.browser.test_screen import log_in as log_in_context

expect = pytest.importorskip(
    "playwright.sync_api", reason="Playwright is not installed: pip install playwright"
).expect

pytestmark = pytest.mark.usefixtures("demo_agent")

SWITCH_WORDS = {
    "en": {
        "on": "Memory is on",
        "off": "Memory is off",
        "off_means": "neither sees nor saves notes; your notes stay here",
        "pinned": "Pinned",
        "pin": "Pin",
        "unpin": "Unpin",
    },
    "ru": {
        "on": "Память включена",
        "off": "Память выключена",
        "off_means": "не видит и не сохраняет заметки; ваши заметки остаются здесь",
        "pinned": "Закреплённые",
        "pin": "Закрепить",
        "unpin": "Открепить",
    },
}


@pytest.fixture
def person(transactional_db):
    from django.contrib.auth import get_user_model

    return get_user_model().objects.create_user(username="ann", password="pw-for-tests")


def screen_page(new_context: Any, live_server: Any, person: Any, language: str, javascript: bool):
    context = new_context(
        java_script_enabled=javascript,
        locale=f"{language}-{language.upper()}",
        extra_http_headers={"Accept-Language": language},
    )
    log_in_context(context, live_server, person)
    page = context.new_page()
    page.goto(live_server.url + "/memory/")
    return page


@pytest.mark.parametrize("language", ["en", "ru"])
@pytest.mark.parametrize("javascript", [True, False], ids=["js", "no-js"])
def test_the_memory_switch_turns_memory_off_and_on(
    live_server, person, new_context, language, javascript
):
    words = SWITCH_WORDS[language]
    note = add(person, "Likes green tea.")
    page = screen_page(new_context, live_server, person, language, javascript)
    switch = page.get_by_role("switch")
    expect(switch).to_have_attribute("aria-checked", "true")
    expect(switch).to_contain_text(words["on"])

    switch.click()
    switch = page.get_by_role("switch")
    expect(switch).to_have_attribute("aria-checked", "false")
    expect(switch).to_contain_text(words["off"])
    expect(page.locator("#am-switch-text")).to_contain_text(words["off_means"])
    memory = LongTermMemory()
    assert not memory.enabled(person)
    assert memory.begin_turn(person, None).text == ""
    assert memory.tools([], "openai", user=person) == []
    # The notes stay on the screen, editable.
    expect(page.locator(f"#note-{note.id}")).to_contain_text("Likes green tea.")

    page.get_by_role("switch").click()
    expect(page.get_by_role("switch")).to_have_attribute("aria-checked", "true")
    assert memory.enabled(person)
    assert "Likes green tea." in memory.begin_turn(person, None).text


@pytest.mark.parametrize("language", ["en", "ru"])
@pytest.mark.parametrize("javascript", [True, False], ids=["js", "no-js"])
def test_pin_and_unpin_from_the_notes_menu(live_server, person, new_context, language, javascript):
    words = SWITCH_WORDS[language]
    note = add(person, "Never suggest npm.", ("Rules",))
    add(person, "Likes green tea.")
    page = screen_page(new_context, live_server, person, language, javascript)
    row = page.locator(f"#note-{note.id}")
    row.locator("summary.am-menu-button").click()
    row.get_by_role("button", name=words["pin"], exact=True).click()

    pinned = page.locator("#am-pinned")
    expect(pinned).to_contain_text(words["pinned"])
    expect(pinned).to_contain_text("Never suggest npm.")
    expect(pinned).not_to_contain_text("Likes green tea.")
    assert LongTermMemory().note(person, note.id).pinned

    row = page.locator(f"#note-{note.id}")
    row.locator("summary.am-menu-button").click()
    row.get_by_role("button", name=words["unpin"], exact=True).click()
    expect(page.locator("#am-pinned")).to_have_count(0)
    assert not LongTermMemory().note(person, note.id).pinned


def test_a_fact_told_in_a_temporary_chat_is_not_recalled_and_not_on_the_memory_screen(
    live_server, person, page
):
    log_in(page, live_server)
    page.get_by_role("button", name="Temporary chat").click()
    expect(page.locator("#temporary-banner")).to_contain_text("nothing you say in this chat")
    say(page, "remember that I live in Lisbon")
    expect(last_answer(page)).to_be_visible()
    expect(page.locator(".tool")).to_have_count(0)
    assert Chat.objects.get(user=person).is_temporary
    assert LongTermMemory().notes(person) == []

    page.goto(live_server.url + "/")
    new_chat(page)
    expect(page.locator("#temporary-banner")).to_have_count(0)
    say(page, "what do you know about me?")
    expect(last_answer(page)).to_be_visible()
    expect(last_answer(page)).not_to_contain_text("Lisbon")

    page.goto(live_server.url + "/memory/")
    expect(page).to_have_url(re.compile(r"/memory/$"))
    expect(page.locator("body")).not_to_contain_text("Lisbon")
    expect(page.locator("#am-empty")).to_be_visible()
