"""Reverting one merged group of a two-group run on the memory screen, in Chromium."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from agent_memory import LongTermMemory
from agent_memory.models import MemoryNote
from agent_memory.notes import NewNote
from agent_memory.stores.base import MergePlan, RunOutcome
from agent_memory.stores.orm import DjangoStore
from tests.browser.test_screen import log_in, revert

expect = pytest.importorskip(
    "playwright.sync_api", reason="Playwright is not installed: pip install playwright"
).expect


@pytest.fixture
def person(transactional_db):
    return get_user_model().objects.create_user(username="bea", password="pw-for-tests")


def two_group_run(user: Any) -> tuple[int, list[Any]]:
    """One run that merged tea notes (group 0) and porridge notes (group 1)."""
    notes = LongTermMemory().create_notes(
        user,
        [
            {"categories": ["Drinks"], "content": "Prefers tea"},
            {"categories": ["Drinks"], "content": "Takes no sugar in tea"},
            {"categories": ["Food"], "content": "Eats porridge"},
            {"categories": ["Food"], "content": "Eats porridge at 7"},
        ],
    )
    store, now = DjangoStore(), timezone.now()
    run = store.claim_optimization_run(
        user.pk, model="default", now=now, lease_until=now + timedelta(minutes=10), force=True
    )
    for index, (pair, content, category) in enumerate(
        [
            (notes[:2], "Prefers tea, no sugar", "Drinks"),
            (notes[2:], "Eats porridge at 7", "Food"),
        ]
    ):
        plan = MergePlan(
            group_index=index,
            sources={note.id: note.version for note in pair},
            note=NewNote(categories=(category,), content=content, source="merge"),
        )
        store.apply_merge(user.pk, run.id, plan, now=now)
    store.finish_optimization_run(
        user.pk, run.id, RunOutcome(True), now=now, interval=timedelta(hours=24)
    )
    return run.id, notes


def contents(user: Any) -> list[str]:
    return sorted(MemoryNote.objects.filter(user=user).values_list("content", flat=True))


@pytest.mark.parametrize("js", [True, False], ids=["htmx", "no-js"])
def test_revert_one_group_and_the_other_stays_applied_and_revertable(
    new_context, live_server, person, js
):
    run_id, notes = two_group_run(person)
    context = new_context(java_script_enabled=js)
    log_in(context, live_server, person)
    page = context.new_page()
    page.goto(f"{live_server.url}/memory/")
    merges = page.locator("#am-merges")
    expect(merges.get_by_role("link", name="Revert…")).to_have_count(2)

    revert(page, page.locator(f"#merge-{run_id}-group-0"))

    expect(page.locator(".am-messages")).to_contain_text("Merge reverted")
    assert contents(person) == ["Eats porridge at 7", "Prefers tea", "Takes no sugar in tea"]
    merges = page.locator("#am-merges")
    expect(merges).to_contain_text("Eats porridge at 7")
    expect(merges).not_to_contain_text("Prefers tea, no sugar")
    expect(merges.get_by_role("link", name="Revert…")).to_have_count(1)

    revert(page, page.locator(f"#merge-{run_id}-group-1"))

    # The section stays for its message, with nothing left to revert.
    expect(page.locator("#am-merges .am-messages")).to_contain_text("Merge reverted")
    expect(page.locator("#am-merges").get_by_role("link", name="Revert…")).to_have_count(0)
    assert contents(person) == [
        "Eats porridge",
        "Eats porridge at 7",
        "Prefers tea",
        "Takes no sugar in tea",
    ]
    assert MemoryNote.objects.get(pk=notes[2].id).version == 2
