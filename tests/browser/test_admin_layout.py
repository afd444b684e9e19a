"""Admin for ops in Chromium at 1280 px, in English and Russian: every column of the runs list
is on screen, a note's text stays on one line, and a rejection sits beside its notes' texts."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from agent_memory import LongTermMemory
from agent_memory.models import MergeRun

from .conftest import save_screenshot

expect = pytest.importorskip(
    "playwright.sync_api", reason="Playwright is not installed: pip install playwright"
).expect

PASSWORD = "pw-for-tests"
WIDTH = 1280
LONG_NOTE = (
    "Prefers green tea without sugar in the morning and black coffee after lunch, "
    "except on Sundays when the whole family has cocoa together at the lake house"
)
HEADERS = {
    "en": ["Applied", "Rejected", "Reverted"],
    "ru": ["Применено", "Отклонено", "Отменён"],
}


@pytest.fixture
def ops_page(live_server, transactional_db, page_in):
    """A staff page logged in through the admin's login form, in the language asked for."""
    get_user_model().objects.create_superuser("ops", "ops@example.com", PASSWORD)

    def open_as(language: str):
        page = page_in(language, {"width": WIDTH, "height": 800})
        page.goto(live_server.url + "/admin/login/")
        page.fill("#id_username", "ops")
        page.fill("#id_password", PASSWORD)
        page.locator("input[type=submit]").click()
        expect(page.locator("#content")).to_be_visible()
        return page

    return open_as


def make_runs(person, count: int = 5) -> MergeRun:
    memory = LongTermMemory()
    tea, coffee = memory.create_notes(
        person,
        [
            {"categories": ["Drinks"], "content": "Likes coffee"},
            {"categories": ["Drinks"], "content": "Doesn't like coffee"},
        ],
    )
    now = timezone.now()
    runs = [
        MergeRun.objects.create(
            user=person,
            status="failed",
            model="a-rather-long-model-alias-for-the-gateway",
            started_at=now - timedelta(days=number),
            lease_expires_at=now - timedelta(days=number) + timedelta(minutes=10),
            finished_at=now - timedelta(days=number) + timedelta(seconds=40),
            reverted_at=now - timedelta(days=number) + timedelta(hours=1),
            proposals={
                "schema": 1,
                "groups": [
                    {
                        "ids": [f"memory:{tea.id}", f"memory:{coffee.id}"],
                        "categories": ["Drinks"],
                        "content": "Likes coffee",
                    }
                ],
            },
            rejected=[
                {
                    "index": 0,
                    "ids": [tea.id, coffee.id],
                    "code": "polarity",
                    "reason": (
                        "The sources disagree: one denies what another affirms, so they must "
                        "stay separate notes."
                    ),
                }
            ],
            error="Every proposed group was rejected.",
        )
        for number in range(count)
    ]
    return runs[0]


def right_edge(locator) -> float:
    box = locator.bounding_box()
    assert box is not None
    return box["x"] + box["width"]


def shown_without_scrolling(page, locator) -> bool:
    """Inside the window and inside the list's own box (which scrolls sideways when the table
    is wider than the room it has)."""
    limit = min(WIDTH, right_edge(page.locator("#changelist .results")))
    return right_edge(locator) <= limit + 0.5


@pytest.mark.parametrize("language", ["en", "ru"])
def test_runs_list_shows_every_column_at_1280(ops_page, make_user, language):
    make_runs(make_user("a-person-with-a-long-username"))
    page = ops_page(language)
    page.goto(page.url.split("/admin/")[0] + "/admin/agent_memory/mergerun/")
    for name in HEADERS[language]:
        header = page.locator("#result_list thead th", has_text=name)
        expect(header).to_be_visible()
        assert shown_without_scrolling(page, header), f"{name} is off screen"
    assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH
    # The count under the list speaks proper Russian plurals.
    footer = page.locator("p.paginator")
    expect(footer).to_contain_text(
        "5 запусков оптимизатора" if language == "ru" else "5 optimization runs"
    )
    save_screenshot(page, f"admin-runs-{language}.png")


@pytest.mark.parametrize("language", ["en", "ru"])
def test_notes_list_shows_up_to_two_lines_of_content(ops_page, make_user, language):
    person = make_user("ann")
    LongTermMemory().create_notes(
        person, [{"categories": ["Drinks", "Family", "Weekends"], "content": LONG_NOTE}]
    )
    page = ops_page(language)
    page.goto(page.url.split("/admin/")[0] + "/admin/agent_memory/memorynote/")
    cell = page.locator("#result_list tbody td.field-excerpt span[title]").first
    expect(cell).to_have_attribute("title", LONG_NOTE)
    line = page.evaluate("el => parseFloat(getComputedStyle(el).lineHeight)", cell.element_handle())
    box = cell.bounding_box()
    # Two lines at most, then "…" (one line cut the text at about 30 characters).
    assert box is not None and box["height"] <= line * 2.5, "more than two lines"
    assert box["width"] > 160, "the text is squeezed"
    assert shown_without_scrolling(page, page.locator("#result_list thead th").last)
    assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH
    # Labels read like labels: "Categories:", not "categories:".
    page.locator("#result_list tbody a").first.click()
    expect(page.locator("label[for=id_categories]")).to_have_text(
        "Категории:" if language == "ru" else "Categories:"
    )


@pytest.mark.parametrize("language", ["en", "ru"])
def test_a_rejection_sits_beside_the_texts_of_its_notes(ops_page, make_user, language):
    run = make_runs(make_user("ann"), count=1)
    page = ops_page(language)
    page.goto(page.url.split("/admin/")[0] + f"/admin/agent_memory/mergerun/{run.pk}/change/")
    row = page.locator(".field-rejection_reasons tbody tr").first
    expect(row).to_contain_text("Группа 1" if language == "ru" else "Group 1")
    expect(row).to_contain_text("Likes coffee")
    expect(row).to_contain_text("Doesn't like coffee")
    expect(row).to_contain_text(
        "Источники противоречат" if language == "ru" else "The sources disagree"
    )
    expect(page.locator(".field-failure")).to_contain_text(
        "Все предложенные группы отклонены" if language == "ru" else "Every proposed group"
    )
