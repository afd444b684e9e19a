"""Screenshots of the example chat for the documentation (docs/screenshots/example-chat-*.png),
refreshed only with ``AGENT_MEMORY_SCREENSHOTS=1``.

Each shot is also a check: the page shows what the picture is meant to document.
"""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

expect = pytest.importorskip(
    "playwright.sync_api", reason="Playwright is not installed: pip install playwright"
).expect

SCRIPT = {
    "en": (
        "remember that I prefer tea",
        "what do you know about me?",
        "Saved a note",
        "tea",
    ),
    "ru": ("запомни, что я люблю чай", "что ты обо мне знаешь?", "Сохранил заметку", "чай"),
}


pytestmark = pytest.mark.usefixtures("demo_agent")


@pytest.mark.parametrize("language", ["en", "ru"])
def test_example_chat_screenshot(live_server, transactional_db, new_context, screenshots, language):
    get_user_model().objects.create_user(username="ann", password="pw-for-tests")
    remember, question, label, known = SCRIPT[language]
    page = new_context(locale=f"{language}-{language.upper()}").new_page()
    page.goto(live_server.url + "/accounts/login/")
    page.fill("#id_username", "ann")
    page.fill("#id_password", "pw-for-tests")
    page.locator("button.primary").click()

    for text in (remember, question):
        page.locator("nav.sidebar button.primary").click()
        page.fill("textarea[name=text]", text)
        page.locator("form.composer button.primary").click()
        expect(page.locator(".question").last).to_contain_text(text)
    expect(page.locator(".bubble.answer").last).to_contain_text(known)
    page.locator("details.memory summary").first.click()
    expect(page.locator("pre.memory-text").first).to_contain_text("<agent_memory>")

    # The first chat: the tool call under its label, with the link to the memory screen.
    page.locator("nav.sidebar li a").nth(1).click()
    expect(page.locator(".tool").first).to_contain_text(label)
    page.screenshot(path=str(screenshots / f"example-tool-call-{language}.png"), full_page=True)
    page.locator("nav.sidebar li a").nth(0).click()
    page.locator("details.memory summary").first.click()
    page.screenshot(path=str(screenshots / f"example-chat-{language}.png"), full_page=True)
