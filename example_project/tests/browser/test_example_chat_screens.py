"""The example chat as a person sees it, in Chromium, on a laptop (1280 px) and a phone (390 px),
in English and Russian: memory work in words, the quiet "memory used" hint, a layout that fits,
titles cut at a word, and a demo agent that writes about the person."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth import get_user_model

from agent_memory import LongTermMemory
from example_project.chat.models import Chat
from tests.browser.conftest import save_screenshot

expect = pytest.importorskip(
    "playwright.sync_api", reason="Playwright is not installed: pip install playwright"
).expect

PASSWORD = "pw-for-tests"
LAPTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}

WORDS = {
    "en": {
        "remember": "remember that I prefer tea",
        "saved_note": "Prefers tea",
        "saved": "Saved a note",
        "call_me": "call me Sasha",
        "name_note": "Wants to be called Sasha",
        "ask": "what do you know about me?",
        "hint": "Memory used in this chat",
        "forget": "forget tea",
        "searched": "Searched memory",
        "deleted": "Deleted a note",
        "new_chat": "New chat",
        "send": "Send",
        "delete_chat": "Delete chat",
        "long": (
            "please remember that my favourite breakfast is porridge with blueberries, honey "
            "and a pinch of cinnamon"
        ),
    },
    "ru": {
        "remember": "запомни, что я люблю чай",
        "saved_note": "Любит чай",
        "saved": "Сохранил заметку",
        "call_me": "зови меня Саша",
        "name_note": "Просит называть себя: Саша",
        "ask": "что ты обо мне знаешь?",
        "hint": "Память использована в этом чате",
        "forget": "забудь про чай",
        "searched": "Поискал в памяти",
        "deleted": "Удалил заметку",
        "new_chat": "Новый чат",
        "send": "Отправить",
        "delete_chat": "Удалить чат",
        "long": (
            "запомни, что мой любимый завтрак — овсяная каша с черникой, мёдом и щепоткой "
            "корицы по выходным"
        ),
    },
}


pytestmark = pytest.mark.usefixtures("demo_agent")


@pytest.fixture
def person(transactional_db):
    return get_user_model().objects.create_user(username="ann", password=PASSWORD)


@pytest.fixture
def open_chat(live_server, person, page_in):
    """A logged-in page in ``language`` on ``viewport``."""

    def open_as(language: str, viewport: dict[str, int]) -> Any:
        page = page_in(language, viewport)
        page.goto(live_server.url + "/accounts/login/")
        page.fill("#id_username", "ann")
        page.fill("#id_password", PASSWORD)
        page.locator("main button[type=submit]").click()
        expect(page.locator("nav.sidebar")).to_be_visible()
        return page

    return open_as


def say(page: Any, words: dict[str, str], text: str) -> None:
    page.fill("textarea[name=text]", text)
    page.get_by_role("button", name=words["send"]).click()
    expect(page.locator(".question").last).to_contain_text(text)


def new_chat(page: Any, words: dict[str, str]) -> None:
    page.get_by_role("button", name=words["new_chat"]).click()
    expect(page.locator("#feed")).to_be_visible()


def box(locator: Any) -> dict[str, float]:
    found = locator.bounding_box()
    assert found is not None
    return found


def line_height(page: Any, locator: Any) -> float:
    return page.evaluate(
        "el => parseFloat(getComputedStyle(el).lineHeight) || 1.5 * parseFloat("
        "getComputedStyle(el).fontSize)",
        locator.element_handle(),
    )


@pytest.mark.parametrize("language", ["en", "ru"])
def test_memory_work_reads_in_words_and_the_hint_leads_to_memory(open_chat, person, language):
    words = WORDS[language]
    page = open_chat(language, LAPTOP)
    new_chat(page, words)
    say(page, words, words["remember"])
    tool = page.locator(".tool").last
    expect(tool.locator(".label")).to_have_text(words["saved"])
    assert "create" not in tool.inner_text()  # the raw action stays inside "Details"
    expect(page.locator(".bubble.answer").last).to_contain_text(words["saved_note"])

    say(page, words, words["call_me"])
    expect(page.locator(".bubble.answer").last).to_contain_text(words["name_note"].split()[-1])

    # A new chat: memory is read once, the hint says so quietly, without the raw block open.
    new_chat(page, words)
    say(page, words, words["ask"])
    answer = page.locator(".bubble.answer").last
    expect(answer).to_contain_text(words["saved_note"])
    expect(answer).to_contain_text(words["name_note"])
    hint = page.locator("#memory-hint")
    expect(hint).to_have_text(words["hint"])
    expect(page.locator("pre.memory-text").first).to_be_hidden()
    save_screenshot(page, f"example-chat-hint-{language}.png")

    say(page, words, words["forget"])
    labels = page.locator(".tool .label")
    expect(labels.nth(0)).to_have_text(words["searched"])
    expect(labels.nth(1)).to_have_text(words["deleted"])

    hint.get_by_role("link").click()
    expect(page).to_have_url(re.compile(r"/memory/$"))
    expect(page.locator("body")).to_contain_text(words["name_note"])
    contents = [note.content for note in LongTermMemory().notes(person)]
    assert contents == [words["name_note"]]


@pytest.mark.parametrize("language", ["en", "ru"])
def test_the_chat_fits_a_laptop_and_titles_are_cut_at_a_word(open_chat, language):
    words = WORDS[language]
    page = open_chat(language, LAPTOP)
    new_chat(page, words)
    say(page, words, words["long"])

    title = Chat.objects.get().title
    assert title.endswith("…") and len(title) <= 60
    cut = len(title) - 1
    assert words["long"].startswith(title[:-1]) and not words["long"][cut].isalnum()
    heading = page.locator(".chatbar h1")
    expect(heading).to_have_text(title)
    expect(page.locator("nav.sidebar a.current")).to_have_text(title)

    delete = page.get_by_role("button", name=words["delete_chat"])
    assert box(delete)["height"] < 2 * line_height(page, delete), "Delete chat wraps"
    # The controls are one row, inside the window; the title keeps room to be read.
    tops = set()
    for control in page.locator(".chatbar button, .chatbar select").all():
        control_box = box(control)
        tops.add(round(control_box["y"] + control_box["height"] / 2))
        assert control_box["x"] + control_box["width"] <= LAPTOP["width"]
    assert max(tops) - min(tops) <= 2, "the controls wrap onto two rows"
    assert box(heading)["width"] >= 250
    assert page.evaluate("document.documentElement.scrollWidth") <= LAPTOP["width"]


@pytest.mark.parametrize("language", ["en", "ru"])
def test_on_a_phone_the_conversation_comes_first(open_chat, person, language):
    words = WORDS[language]
    for number in range(8):
        Chat.objects.create(user=person, title=f"An older chat about topic number {number}")
    page = open_chat(language, PHONE)
    new_chat(page, words)
    say(page, words, words["remember"])

    first_question = page.locator(".question").first
    expect(first_question).to_be_in_viewport()
    assert box(first_question)["y"] < PHONE["height"] / 2
    # The chat list is one line that scrolls sideways; the demo banner one sentence.
    sidebar = box(page.locator("nav.sidebar"))
    assert sidebar["height"] < 3 * line_height(page, page.locator("nav.sidebar li a").first)
    banner = page.locator("#model-banner")
    expect(banner).to_contain_text(
        "not a language model" if language == "en" else "не языковая модель"
    )
    assert box(banner)["height"] < 80
    # Every control is reachable, nothing is wider than the screen.
    expect(page.get_by_role("button", name=words["delete_chat"])).to_be_visible()
    expect(page.get_by_role("button", name=words["new_chat"])).to_be_visible()
    save_screenshot(page, f"example-chat-phone-{language}.png", full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
