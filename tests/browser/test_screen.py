"""The memory screen in Chromium, with JavaScript (htmx) and without it.

Every flow is checked twice: in the page the person sees, and in the database.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from agent_memory import LongTermMemory
from agent_memory.models import MemoryNote
from agent_memory.notes import NewNote
from agent_memory.stores.base import MergePlan, RunOutcome
from agent_memory.stores.orm import DjangoStore

expect = pytest.importorskip(
    "playwright.sync_api", reason="Playwright is not installed: pip install playwright"
).expect


@pytest.fixture
def person(transactional_db):
    return get_user_model().objects.create_user(username="ann", password="pw-for-tests")


def log_in(context: Any, live_server: Any, user: Any) -> None:
    """Give the browser context the session of a logged-in ``user``."""
    client = Client()
    client.force_login(user)
    cookie = client.cookies[settings.SESSION_COOKIE_NAME]
    context.add_cookies(
        [{"name": settings.SESSION_COOKIE_NAME, "value": cookie.value, "url": live_server.url}]
    )


def add(user: Any, content: str, categories: tuple[str, ...] = ("Food",), source="agent"):
    (note,) = LongTermMemory().create_notes(
        user, [{"categories": list(categories), "content": content}], source=source
    )
    return note


def make_merge(user: Any, sources: list[Any], content: str, categories: tuple[str, ...]) -> int:
    """Merge ``sources`` into one note the way the optimizer does; return the run id."""
    store = DjangoStore()
    now = timezone.now()
    run = store.claim_optimization_run(
        user.pk, model="default", now=now, lease_until=now + timedelta(minutes=10), force=True
    )
    plan = MergePlan(
        group_index=0,
        sources={note.id: note.version for note in sources},
        note=NewNote(categories=categories, content=content, source="merge"),
    )
    store.apply_merge(user.pk, run.id, plan, now=now)
    applied = [{"group": 0, "ids": [note.id for note in sources]}]
    store.finish_optimization_run(
        user.pk, run.id, RunOutcome(True, applied=applied), now=now, interval=timedelta(hours=24)
    )
    return run.id


def contents(user: Any) -> list[str]:
    return sorted(MemoryNote.objects.filter(user=user).values_list("content", flat=True))


def revert(page: Any, scope: Any) -> None:
    """Press "Revert…" in ``scope`` (a merge group, or the Merged section with one group), then
    "Revert the merge" in the confirmation it opens."""
    scope.get_by_role("link", name="Revert…").click()
    page.get_by_role("button", name="Revert the merge").click()


@pytest.fixture
def screen(new_context, live_server, person, js):
    """A page of the logged-in person, opened on the memory screen."""
    context = new_context(java_script_enabled=js)
    log_in(context, live_server, person)

    return lambda: open_memory_screen(context, live_server, js)


def open_memory_screen(context: Any, live_server: Any, js: bool, path: str = "/memory/") -> Any:
    """A new page of ``context`` on the memory screen (or ``path``), with htmx loaded when
    JavaScript is on."""
    page = context.new_page()
    page.goto(f"{live_server.url}{path}")
    if js:
        page.wait_for_function("window.htmx !== undefined")
    return page


def row(page: Any, note_id: int) -> Any:
    return page.locator(f"#note-{note_id}")


def open_menu(note: Any) -> None:
    """Open a note's menu (edit, delete)."""
    note.locator("summary.am-menu-button").click()


def note_action(page: Any, note_id: int, name: str) -> None:
    """Choose "Edit" or "Delete" in a note's menu."""
    open_menu(row(page, note_id))
    row(page, note_id).get_by_role("link", name=name).click()


def test_add(screen, person):
    page = screen()
    expect(page.locator("#am-empty")).to_be_visible()
    page.get_by_label("What to remember").fill("Prefers green tea in the morning")
    page.get_by_label("Categories", exact=True).fill("Food, Habits")
    page.get_by_role("button", name="Add note").click()
    expect(page.locator(".am-note-text")).to_have_text("Prefers green tea in the morning")
    expect(page.locator(".am-note").first).to_contain_text("by you")
    expect(page.locator("#am-count")).to_have_text("1 of 200 notes")
    note = MemoryNote.objects.get(user=person)
    assert (note.categories, note.source, note.version) == (["Food", "Habits"], "person", 1)


def test_add_refused_by_a_rule_keeps_the_text_and_says_why(screen, person):
    page = screen()
    page.get_by_label("What to remember").fill("My password: hunter2-secret")
    page.get_by_label("Categories", exact=True).fill("Accounts")
    page.get_by_role("button", name="Add note").click()
    expect(page.get_by_role("alert").or_(page.locator(".am-field-error")).first).to_contain_text(
        "Memory is not a place for passwords"
    )
    expect(page.get_by_label("What to remember")).to_have_value("My password: hunter2-secret")
    assert contents(person) == []


def test_edit(screen, person, js):
    note = add(person, "Prefers tea")
    page = screen()
    note_action(page, note.id, "Edit")
    editor = row(page, note.id).get_by_label("What to remember")
    expect(editor).to_be_focused()
    # With htmx the editor opens in place; without JavaScript on its own address.
    assert page.url.endswith("/memory/") == js
    editor.fill("Prefers green tea")
    row(page, note.id).get_by_role("button", name="Save").click()
    expect(row(page, note.id).locator(".am-note-text")).to_have_text("Prefers green tea")
    expect(row(page, note.id).locator(".am-messages")).to_have_text("Saved.")
    if js:  # keyboard users land back on the note they saved
        expect(row(page, note.id)).to_be_focused()
    saved = MemoryNote.objects.get(pk=note.id)
    assert (saved.content, saved.version, saved.source) == ("Prefers green tea", 2, "person")


def test_stale_edit_from_a_second_tab(screen, person):
    note = add(person, "Prefers tea")
    first, second = screen(), screen()
    note_action(first, note.id, "Edit")
    note_action(second, note.id, "Edit")
    row(second, note.id).get_by_label("What to remember").fill("Prefers coffee")
    row(second, note.id).get_by_role("button", name="Save").click()
    expect(row(second, note.id).locator(".am-note-text")).to_have_text("Prefers coffee")

    row(first, note.id).get_by_label("What to remember").fill("Prefers green tea")
    row(first, note.id).get_by_role("button", name="Save").click()
    expect(row(first, note.id).get_by_role("alert")).to_contain_text(
        "This note was changed elsewhere while you were editing it"
    )
    expect(row(first, note.id).get_by_label("What to remember")).to_have_value("Prefers coffee")
    saved = MemoryNote.objects.get(pk=note.id)
    assert (saved.content, saved.version) == ("Prefers coffee", 2)

    # Saving again from the fresh text is a deliberate, accepted edit.
    row(first, note.id).get_by_label("What to remember").fill("Prefers coffee, then tea")
    row(first, note.id).get_by_role("button", name="Save").click()
    expect(row(first, note.id).locator(".am-note-text")).to_have_text("Prefers coffee, then tea")
    assert MemoryNote.objects.get(pk=note.id).version == 3


def test_delete(screen, person):
    keep = add(person, "Writes Python", ("Work",))
    note = add(person, "Prefers tea")
    page = screen()
    note_action(page, note.id, "Delete")
    expect(row(page, note.id)).to_contain_text("Delete this note?")
    assert MemoryNote.objects.filter(pk=note.id).exists()
    row(page, note.id).get_by_role("button", name="Delete note").click()
    expect(page.locator(".am-messages")).to_contain_text("Note deleted.")
    expect(row(page, note.id)).to_have_count(0)
    expect(row(page, keep.id)).to_be_visible()
    assert contents(person) == ["Writes Python"]


def test_erase_all(screen, person, make_user):
    add(person, "Prefers tea")
    add(person, "Writes Python", ("Work",))
    other = make_user()
    add(other, "Loves opera", ("Music",))
    page = screen()
    page.get_by_role("link", name="Erase all memory…").click()
    expect(page.locator(".am-loss-list")).to_contain_text(
        "all 2 notes the agent keeps about you (Food, Work)"
    )
    assert len(contents(person)) == 2
    page.get_by_role("button", name="Erase all 2 notes").click()
    expect(page.locator("#am-empty")).to_be_visible()
    expect(page.locator(".am-messages")).to_contain_text("Memory erased: 2 notes deleted.")
    assert contents(person) == []
    assert contents(other) == ["Loves opera"]


def test_revert_a_merge(screen, person):
    tea = add(person, "Prefers tea")
    sugar = add(person, "Takes no sugar in tea", ("Food", "Drinks"))
    make_merge(person, [tea, sugar], "Prefers tea, no sugar", ("Food",))
    assert contents(person) == ["Prefers tea, no sugar"]
    page = screen()
    merges = page.locator("#am-merges")
    expect(merges).to_contain_text("Prefers tea, no sugar")
    expect(merges).to_contain_text("Takes no sugar in tea")
    revert(page, merges)
    # The section stays for its message, with nothing left to revert.
    expect(page.locator("#am-merges .am-messages")).to_contain_text("Merge reverted")
    expect(page.locator("#am-merges").get_by_role("link", name="Revert…")).to_have_count(0)
    expect(row(page, tea.id)).to_contain_text("Prefers tea")
    expect(row(page, sugar.id)).to_contain_text("Takes no sugar in tea")
    assert contents(person) == ["Prefers tea", "Takes no sugar in tea"]
    assert MemoryNote.objects.get(pk=tea.id).version == tea.version + 1


def test_revert_blocked_by_a_duplicate_says_what_to_do(screen, person):
    tea = add(person, "Prefers tea")
    sugar = add(person, "Takes no sugar in tea")
    make_merge(person, [tea, sugar], "Prefers tea, no sugar", ("Food",))
    add(person, "Prefers tea", source="person")  # one original saved again meanwhile
    page = screen()
    revert(page, page.locator("#am-merges"))
    expect(page.locator("#am-merges").get_by_role("alert")).to_contain_text(
        "One of the original notes has been saved again since the merge"
    )
    assert contents(person) == ["Prefers tea", "Prefers tea, no sugar"]


@pytest.mark.parametrize("js", [True], ids=["htmx"], indirect=True)
def test_note_with_html_and_script_shows_as_text(screen, person):
    payload = (
        '<script>window.__pwned = 1</script><img src="x" onerror="window.__pwned = 2">'
        '<b onmouseover="alert(3)">bold</b>'
    )
    category = "<img src=x onerror=window.__pwned=3>"
    add(person, payload, (category,))
    page = screen()
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    text = page.locator(".am-note-text")
    expect(text).to_have_text(payload)
    text.hover()
    open_menu(page.locator(".am-note"))
    page.locator(".am-note").get_by_role("link", name="Edit").click()
    expect(page.locator(".am-note").get_by_label("What to remember")).to_have_value(payload)
    expect(page.locator(".am-group-title")).to_contain_text(category)
    expect(page.locator("#am-category-list option").first).to_have_attribute("value", category)
    assert page.evaluate("window.__pwned") is None
    assert page.locator(".am-note img, .am-note script, .am-note b").count() == 0
    assert dialogs == []
