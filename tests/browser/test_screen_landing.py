"""Every action on the memory screen is answered where the person acted, in Chromium.

A person with 40 notes has a page several screens long. After each action (import, revert, a
revert that conflicts, delete, edit, an edit of a note deleted meanwhile, a link to one note)
the message or the note it concerns must be inside the viewport: its bounding box against the
window, on a desktop (1280×800) and a phone (390×844), with htmx and without JavaScript.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth import get_user_model

from agent_memory import LongTermMemory
from agent_memory.models import MemoryNote
from tests.browser.conftest import PHONE, save_screenshot
from tests.browser.test_screen import (
    log_in,
    make_merge,
    note_action,
    open_memory_screen,
    revert,
    row,
)
from tests.browser.test_screen_revert_groups import two_group_run

expect = pytest.importorskip(
    "playwright.sync_api", reason="Playwright is not installed: pip install playwright"
).expect

#: Forty notes in twelve categories, so that the Merged and Import sections sit far below.
CATEGORIES = ["Books", "Drinks", "Family", "Food", "Health", "Home", "Music", "Pets", "Sport"]
CATEGORIES += ["Travel", "Work", "Zoo"]


def person_with_notes(username: str, count: int, note: Callable[[int], dict[str, Any]]) -> Any:
    """A person with ``count`` notes, ``note(index)`` each, saved a batch at a time."""
    user = get_user_model().objects.create_user(username=username, password="pw-for-tests")
    memory = LongTermMemory()
    for start in range(0, count, memory.limits.max_batch):
        batch = range(start, min(start + memory.limits.max_batch, count))
        memory.create_notes(user, [note(index) for index in batch])
    return user


@pytest.fixture
def person(transactional_db):
    return person_with_notes(
        "cleo",
        40,
        lambda index: {
            "categories": [CATEGORIES[index % len(CATEGORIES)]],
            "content": f"Fact number {index} about Cleo, long enough to take one line",
        },
    )


def screen_opener(
    new_context: Any,
    live_server: Any,
    person: Any,
    js: bool,
    viewport: dict[str, int],
    language: str | None = None,
) -> Callable[..., Any]:
    """``open_page(path="/memory/")``: a new page of one context logged in as ``person``, at
    that window size, with or without JavaScript, in ``language`` if one is given."""
    options: dict[str, Any] = {"java_script_enabled": js, "viewport": viewport}
    if language:
        options["locale"] = f"{language}-{language.upper()}"
        options["extra_http_headers"] = {"Accept-Language": language}
    context = new_context(**options)
    log_in(context, live_server, person)
    return lambda path="/memory/": open_memory_screen(context, live_server, js, path)


@pytest.fixture
def open_screen(new_context, live_server, person, js, viewport):
    return screen_opener(new_context, live_server, person, js, viewport)


def merge_tea_and_sugar(person: Any) -> int:
    """Two Zoo notes merged into one ("Prefers tea, no sugar"); the run's id."""
    tea, sugar = LongTermMemory().create_notes(
        person,
        [
            {"categories": ["Zoo"], "content": "Prefers tea"},
            {"categories": ["Zoo"], "content": "Takes no sugar in tea"},
        ],
    )
    return make_merge(person, [tea, sugar], "Prefers tea, no sugar", ("Zoo",))


def settled(page: Any) -> None:
    """Wait until htmx has settled what it swapped in and the screen has landed: the screen
    scrolls and focuses in a task it queues once htmx settles, after htmx's own scrolling. So:
    no request, swap or settle under way, then one task and two frames (layout and scrolling
    done; a second at most). Without JavaScript, the page has loaded: its fragment and its
    autofocus were scrolled to as it loaded, and no script runs after."""
    if not page.evaluate("() => !!window.htmx"):
        page.wait_for_load_state("load")
        return
    page.wait_for_function(
        "() => !document.querySelector('.htmx-request, .htmx-swapping, .htmx-settling')"
    )
    page.evaluate(
        """() => new Promise(done => {
            setTimeout(() => requestAnimationFrame(() => requestAnimationFrame(done)), 0);
            setTimeout(done, 1000);
        })"""
    )


def assert_in_view(page: Any, locator: Any, shot: str = "") -> None:
    """The element's top is inside the window, and so is its bottom, or it fills the window;
    ``shot`` names the screenshot of that state (refreshed only on request)."""
    expect(locator).to_be_visible()
    settled(page)
    box = locator.bounding_box()
    height = page.viewport_size["height"]
    assert box is not None
    # A fraction of a pixel above the top is the browser's rounding, not a scroll off-screen.
    assert -1 < box["y"] < height, f"top at {box['y']:.0f} px, window {height} px"
    assert box["y"] + min(box["height"], height) <= height + 1, box
    if shot:
        kind = "phone" if page.viewport_size["width"] < 600 else "desktop"
        script = "js" if page.evaluate("() => !!window.htmx") else "no-js"
        save_screenshot(page, f"landing-{shot}-{kind}-{script}-en.png")


FACT_0 = "Fact number 0 about Cleo, long enough to take one line\n"


def last_note(person: Any) -> MemoryNote:
    """A note listed far down the page: in the last category."""
    return MemoryNote.objects.filter(user=person, categories=["Zoo"]).order_by("-id").first()


def test_an_import_answers_beside_the_import_form(open_screen, person):
    page = open_screen()
    page.locator("#import-file").set_input_files(
        files=[
            {
                "name": "notes.txt",
                "mimeType": "text/plain",
                "buffer": b"Plays the ukulele\n" + FACT_0.encode(),
            }
        ]
    )
    page.get_by_label("Categories for a text file").fill("Books")
    page.locator("#am-transfer").get_by_role("button", name="Import notes").click()
    result = page.locator("#am-import-result")
    expect(result).to_contain_text("Imported 1 note.")
    expect(result).to_contain_text("1 note was skipped")
    assert_in_view(page, result, "import")


def test_an_unreadable_import_says_so_beside_the_file_field(open_screen):
    page = open_screen()
    page.locator("#import-file").set_input_files(
        files=[{"name": "photo.txt", "mimeType": "text/plain", "buffer": b"\xff\xfe\x00\x81" * 8}]
    )
    page.locator("#am-transfer").get_by_role("button", name="Import notes").click()
    error = page.locator("#import-file-error")
    expect(error).to_contain_text("The file is not plain text")
    assert_in_view(page, error, "import-unreadable")


def test_a_revert_lands_on_the_merged_section_with_its_message(open_screen, person):
    merge_tea_and_sugar(person)
    page = open_screen()
    revert(page, page.locator("#am-merges"))
    message = page.locator("#am-merges .am-messages")
    expect(message).to_contain_text("Merge reverted: the original notes are back.")
    assert_in_view(page, message, "revert")
    assert MemoryNote.objects.filter(user=person, content="Prefers tea").exists()


def test_a_revert_conflict_is_told_in_its_own_group_beside_the_group_that_can_still_go(
    open_screen, person
):
    run_id, _ = two_group_run(person)
    LongTermMemory().create_notes(person, [{"categories": ["Food"], "content": "Eats porridge"}])
    page = open_screen()
    group = page.locator(f"#merge-{run_id}-group-1")
    revert(page, group)
    alert = page.locator(f"#merge-{run_id}-group-1").get_by_role("alert")
    expect(alert).to_contain_text("saved again since the merge")
    assert_in_view(page, alert, "revert-conflict")
    # The other group's Revert is still offered, below the run's heading, not under a message.
    expect(page.locator(f"#merge-{run_id}-group-0").get_by_role("alert")).to_have_count(0)
    expect(page.locator(f"#merge-{run_id}-group-0").get_by_role("link")).to_be_visible()


def test_a_delete_moves_focus_to_the_next_note_and_says_so_there(open_screen, person):
    zoo = list(MemoryNote.objects.filter(user=person, categories=["Zoo"]).order_by("-id"))
    page = open_screen()
    note_action(page, zoo[0].id, "Delete")
    row(page, zoo[0].id).get_by_role("button", name="Delete note").click()
    following = row(page, zoo[1].id)
    expect(following.locator(".am-messages")).to_contain_text("Note deleted.")
    expect(following).to_be_focused()
    assert_in_view(page, following, "delete")
    assert not MemoryNote.objects.filter(pk=zoo[0].id).exists()


def test_an_edit_confirms_saved_in_the_note_row(open_screen, person):
    note = last_note(person)
    page = open_screen()
    note_action(page, note.id, "Edit")
    row(page, note.id).get_by_label("What to remember").fill("Feeds the zoo's penguins")
    row(page, note.id).get_by_role("button", name="Save").click()
    saved = row(page, note.id)
    expect(saved.locator(".am-note-text")).to_have_text("Feeds the zoo's penguins")
    expect(saved.locator(".am-messages")).to_have_text("Saved.")
    assert_in_view(page, saved, "edit-saved")


def test_an_edit_of_a_deleted_note_keeps_the_text_and_offers_a_new_note(open_screen, person):
    note = last_note(person)
    page = open_screen()
    note_action(page, note.id, "Edit")
    row(page, note.id).get_by_label("What to remember").fill("Feeds the penguins on Fridays")
    MemoryNote.objects.filter(pk=note.id).delete()  # in another tab, or by the agent
    page.get_by_role("button", name="Save", exact=True).click()
    alert = page.get_by_role("alert").filter(has_text="This note no longer exists")
    assert_in_view(page, alert, "edit-gone")
    editor = page.locator("form.am-editor").filter(has=alert)
    expect(editor.get_by_label("What to remember")).to_have_value("Feeds the penguins on Fridays")
    expect(editor.get_by_label("Categories", exact=True)).to_have_value("Zoo")
    editor.get_by_role("button", name="Save as a new note").click()
    expect(page.locator(".am-note-text", has_text="Feeds the penguins on Fridays")).to_be_visible()
    created = MemoryNote.objects.get(user=person, content="Feeds the penguins on Fridays")
    assert created.categories == ["Zoo"]
    assert_in_view(page, row(page, created.id))
    expect(row(page, created.id).locator(".am-messages")).to_contain_text("Note saved.")


def test_a_link_to_one_note_scrolls_to_it_and_highlights_it(open_screen, person):
    note = last_note(person)
    page = open_screen(f"/memory/#note-{note.id}")
    assert_in_view(page, row(page, note.id), "link-to-note")
    expect(page.locator(":target")).to_have_id(f"note-{note.id}")
    background = row(page, note.id).evaluate("node => getComputedStyle(node).backgroundColor")
    assert background not in ("rgba(0, 0, 0, 0)", "transparent")


@pytest.mark.parametrize("js", [True], ids=["htmx"], indirect=True)
@pytest.mark.parametrize("viewport", [PHONE], ids=["phone"], indirect=True)
def test_on_a_phone_every_tap_target_of_a_row_is_44_px_tall(open_screen, person):
    note = MemoryNote.objects.filter(user=person).first()
    LongTermMemory().update_note(person, note.id, note.version, [*note.categories, "Extra"], "x y")
    page = open_screen()
    line = row(page, note.id)
    for target in (line.locator(".am-tag").first, line.locator("summary.am-menu-button")):
        box = target.bounding_box()
        assert box["height"] >= 44 and box["width"] >= 44, box
    for link in page.locator(".am-jump a").all():
        assert link.bounding_box()["height"] >= 44
