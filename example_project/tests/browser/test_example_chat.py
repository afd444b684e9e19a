"""The example chat in Chromium: the offline demo agent, memory across chats, and the memory
text the model received on every turn after compaction, edit and regenerate."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth import get_user_model

from agent_memory import LongTermMemory
from agent_memory.prompt import render
from example_project.chat.models import Chat, Message

expect = pytest.importorskip(
    "playwright.sync_api", reason="Playwright is not installed: pip install playwright"
).expect

PASSWORD = "pw-for-tests"


pytestmark = pytest.mark.usefixtures("demo_agent")


@pytest.fixture
def person(transactional_db):
    return get_user_model().objects.create_user(username="ann", password=PASSWORD)


def log_in(page: Any, live_server: Any, username: str = "ann") -> None:
    """Log in through the login form, as a person does."""
    page.goto(live_server.url + "/")
    expect(page).to_have_url(re.compile(r"/accounts/login/"))
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("button", name="New chat")).to_be_visible()


def new_chat(page: Any) -> None:
    page.get_by_role("button", name="New chat").click()
    expect(page.locator("#feed")).to_be_visible()


def say(page: Any, text: str) -> None:
    page.fill("textarea[name=text]", text)
    page.get_by_role("button", name="Send").click()
    expect(page.locator(".question").last).to_contain_text(text)


def last_answer(page: Any) -> Any:
    return page.locator(".bubble.answer").last


def memory_text(page: Any, turn: int) -> str:
    """The memory text the model received with the question of ``turn`` (as shown on the page)."""
    return page.locator(f"pre.memory-text[data-turn='{turn}']").text_content()


def memory_log(page: Any, live_server: Any) -> list[dict[str, Any]]:
    """The chat's debug view: the memory text of each question, as stored."""
    chat_id = re.search(r"/chats/(\d+)/", page.url)[1]
    response = page.request.get(f"{live_server.url}/chats/{chat_id}/memory-log.json")
    assert response.ok
    return response.json()["turns"]


def full_block(user: Any) -> str:
    memory = LongTermMemory()
    return render(memory.notes(user), memory.limits.max_block_chars)


def add(user: Any, content: str, category: str = "Food") -> Any:
    (note,) = LongTermMemory().create_notes(user, [{"categories": [category], "content": content}])
    return note


@pytest.mark.parametrize("javascript", [True, False], ids=["js", "no-js"])
def test_remember_in_one_chat_known_in_the_next(live_server, person, new_context, javascript):
    page = new_context(java_script_enabled=javascript).new_page()
    log_in(page, live_server)
    expect(page.locator("#model-banner")).to_contain_text("not a language model")
    new_chat(page)

    say(page, "remember that I prefer tea")

    tool = page.locator(".tool").first
    expect(tool).to_contain_text("Saved a note")
    expect(tool).not_to_contain_text("manage_memory")
    assert "create" not in tool.inner_text()  # the raw action stays inside "Details"
    expect(last_answer(page)).to_contain_text("Prefers tea")
    # "Memory updated" leads to the note on the memory screen, highlighted there.
    tool.get_by_role("link", name="Memory updated").click()
    (saved,) = LongTermMemory().notes(person)
    expect(page).to_have_url(re.compile(rf"/memory/#note-{saved.id}$"))
    expect(page.locator(f"#note-{saved.id}")).to_contain_text("Prefers tea")
    # The browser marks the fragment's element as the target once it has scrolled to it.
    expect(page.locator(":target")).to_have_id(f"note-{saved.id}")
    assert saved.content == "Prefers tea"

    page.goto(live_server.url + "/")
    new_chat(page)
    say(page, "what do you know about me?")

    expect(last_answer(page)).to_contain_text("Prefers tea")
    # It knew because the block was in the question, not from a search.
    received = memory_text(page, 1)
    assert received == full_block(person)
    assert received.startswith("<agent_memory>\n") and received.endswith("\n</agent_memory>")
    note = LongTermMemory().notes(person)[0]
    assert f'<note key="memory:{note.id}" version="1" categories="Preferences"' in received
    assert page.locator(".tool").count() == 0
    assert memory_log(page, live_server)[0]["memory_text"] == received


def test_compaction_sends_only_what_changed(live_server, person, new_context):
    add(person, "I live in Lisbon", "Home")
    tea = add(person, "I prefer tea")
    django = add(person, "I write Django", "Work")
    page = new_context().new_page()
    log_in(page, live_server)
    new_chat(page)
    say(page, "hello")
    say(page, "how are you?")
    block_seen = memory_text(page, 1)
    assert block_seen == full_block(person)
    assert memory_text(page, 2) == ""
    # Memory changes elsewhere (the memory screen, another chat).
    memory = LongTermMemory()
    memory.update_note(person, tea.id, tea.version, ["Food"], "I prefer green tea", source="person")
    memory.delete_note(person, django.id, django.version)
    coffee = add(person, "I never drink coffee")

    page.select_option("#id_keep", "1")
    page.get_by_role("button", name="Compact").click()
    expect(page.locator("#summary")).to_contain_text("Hello")
    expect(page.locator(".question")).to_have_count(1)  # "how are you?" stays
    # The block the model was given moved to the first question kept, word for word but for
    # the deleted note, whose text the example removed from its stored messages.
    assert memory_text(page, 2) == block_seen.replace(
        ">I write Django<", f">[deleted note memory:{django.id}]<"
    )
    say(page, "what do you know about me?")

    received = memory_text(page, 3)
    lines = received.split("\n")
    assert lines[0] == "<agent_memory>" and lines[-1] == "</agent_memory>"
    notes = {note.id: note for note in memory.notes(person)}
    assert lines[2:-1] == [
        line
        for line in render([notes[coffee.id], notes[tea.id]], 12000).split("\n")
        if line.startswith("<note ")
    ] + [f'[No longer valid: "memory:{django.id}"]']
    assert 'version="2"' in lines[3] and "I prefer green tea" in lines[3]
    log = memory_log(page, live_server)
    assert log[-1]["reason"] == "compacted" and log[-1]["memory_text"] == received
    answer = last_answer(page)
    expect(answer).to_contain_text("I prefer green tea")
    expect(answer).to_contain_text("I never drink coffee")
    expect(answer).to_contain_text("I live in Lisbon")  # unchanged, known from the carried block
    expect(answer).not_to_contain_text("I write Django")

    say(page, "thanks")
    assert memory_text(page, 4) == ""


def test_compaction_of_every_turn_sends_the_full_block(live_server, person, new_context):
    add(person, "I prefer tea")
    page = new_context(java_script_enabled=False).new_page()
    log_in(page, live_server)
    new_chat(page)
    say(page, "hello")
    add(person, "I write Django", "Work")
    page.select_option("#id_keep", "0")
    page.get_by_role("button", name="Compact").click()
    expect(page.locator(".question")).to_have_count(0)
    say(page, "what do you know about me?")
    # Nothing of the chat is left but the summary: numbering starts again.
    assert memory_text(page, 1) == full_block(person)
    assert memory_log(page, live_server)[0]["reason"] == "compacted"
    expect(last_answer(page)).to_contain_text("I write Django")


def test_edit_first_message_sends_the_full_block_again(live_server, person, new_context):
    add(person, "I prefer tea")
    page = new_context().new_page()
    log_in(page, live_server)
    new_chat(page)
    say(page, "hello")
    say(page, "how are you?")
    first_block = memory_text(page, 1)
    add(person, "I write Django", "Work")

    page.get_by_role("link", name="Edit first message").click()
    page.fill("textarea[name=text]", "what do you know about me?")
    page.get_by_role("button", name="Save and ask again").click()

    expect(page.locator(".question")).to_have_count(1)
    received = memory_text(page, 1)
    assert received == full_block(person) != first_block
    assert "I write Django" in received
    assert memory_log(page, live_server)[0]["reason"] == "first_message_edited"
    expect(last_answer(page)).to_contain_text("I write Django")


def test_regenerate_first_answer_sends_the_full_block_again(live_server, person, new_context):
    page = new_context().new_page()
    log_in(page, live_server)
    new_chat(page)
    say(page, "what do you know about me?")
    expect(last_answer(page)).to_contain_text("don't know anything")
    assert memory_text(page, 1) == "<agent_memory>\n" + memory_text(page, 1).split("\n")[1] + (
        "\n</agent_memory>"
    )
    add(person, "I prefer tea")

    page.get_by_role("button", name="Regenerate first answer").click()

    expect(last_answer(page)).to_contain_text("I prefer tea")
    received = memory_text(page, 1)
    assert received == full_block(person)
    assert memory_log(page, live_server)[0]["reason"] == "first_answer_regenerated"
    chat = Chat.objects.get(user=person)
    assert chat.messages.filter(role=Message.Role.USER).count() == 1


def test_group_chat_gets_no_memory(live_server, person, new_context):
    add(person, "I prefer tea")
    page = new_context().new_page()
    log_in(page, live_server)
    new_chat(page)
    page.get_by_role("button", name="Group chat: off").click()
    expect(page.get_by_role("button", name="Group chat: on")).to_be_visible()
    say(page, "what do you know about me?")
    assert memory_text(page, 1) == ""
    expect(last_answer(page)).to_contain_text("don't know anything")
    page.get_by_role("button", name="Group chat: on").click()
    say(page, "what do you know about me?")
    assert memory_text(page, 2) == full_block(person)
    expect(last_answer(page)).to_contain_text("I prefer tea")


def test_enter_sends_shift_enter_starts_a_line_and_the_phone_keeps_its_labels(
    live_server, person, new_context
):
    page = new_context(viewport={"width": 390, "height": 844}).new_page()
    log_in(page, live_server)
    new_chat(page)
    box = page.locator("textarea[name=text]")
    box.fill("remember that I prefer tea")
    box.press("Shift+Enter")
    expect(page.locator(".question")).to_have_count(0)
    box.fill("remember that I prefer tea")
    box.press("Enter")
    expect(page.locator(".question").last).to_contain_text("remember that I prefer tea")
    page.locator("textarea[name=text]").fill("what do you know about me?")
    page.locator("textarea[name=text]").press("Control+Enter")
    expect(page.locator(".question").last).to_contain_text("what do you know about me?")
    # On a phone the compaction select keeps its visible label.
    label = page.locator("label[for=id_keep]")
    expect(label).to_be_visible()
    assert label.bounding_box()["width"] > 40
