"""Admin's answers in Chromium at 1280 px, in English and Russian: a whole-run revert with one
group that cannot be reverted says what was reverted and names the group that was not; a
refused edit shows its reason at the top of the form with the typed text still in the box."""

from __future__ import annotations

import pytest

from agent_memory import LongTermMemory
from agent_memory.models import MemoryNote, MergedNoteSnapshot

from .conftest import save_screenshot
from .test_admin_layout import ops_page  # noqa: F401 (a fixture)
from .test_screen_revert_groups import two_group_run

expect = pytest.importorskip(
    "playwright.sync_api", reason="Playwright is not installed: pip install playwright"
).expect

SAID = {
    "en": {
        "reverted": "group 2 reverted, its original notes are back.",
        "refused": "Group 1 of merge {run}: This merge can’t be reverted",
        "duplicate": "This text is already saved as memory:",
    },
    "ru": {
        "reverted": "группа 2 отменена, её исходные заметки вернулись.",
        "refused": "Группа 1 объединения {run}: Это объединение нельзя отменить",
        "duplicate": "Этот текст уже сохранён как memory:",
    },
}


def assert_in_view(page, locator) -> None:
    """The element is shown and its top is inside the window."""
    expect(locator).to_be_visible()
    box = locator.bounding_box()
    assert box is not None and -1 < box["y"] < page.viewport_size["height"], box


@pytest.mark.parametrize("language", ["en", "ru"])
def test_a_whole_run_revert_names_the_group_it_could_not_revert(ops_page, make_user, language):  # noqa: F811
    person = make_user("ann")
    run_id, _notes = two_group_run(person)
    memory = LongTermMemory()
    merged = MergedNoteSnapshot.objects.get(run_id=run_id, group_index=0).merged_note_id
    note = memory.note(person, merged)
    memory.update_note(person, note.id, note.version, note.categories, "Prefers tea, ever")
    page = ops_page(language)
    page.goto(page.url.split("/admin/")[0] + "/admin/agent_memory/mergerun/")
    page.locator(f"input[name=_selected_action][value='{run_id}']").check()
    page.select_option("select[name=action]", "revert_runs")
    page.locator("button[name=index]").click()
    said = SAID[language]
    assert_in_view(page, page.locator("ul.messagelist li.success", has_text=said["reverted"]))
    assert_in_view(
        page, page.locator("ul.messagelist li.error", has_text=said["refused"].format(run=run_id))
    )
    save_screenshot(page, f"admin-revert-partly-{language}.png")
    assert "Eats porridge" in MemoryNote.objects.filter(user=person).values_list(
        "content", flat=True
    )


@pytest.mark.parametrize("language", ["en", "ru"])
def test_a_refused_edit_keeps_the_typed_text_under_its_reason(ops_page, make_user, language):  # noqa: F811
    person = make_user("ann")
    memory = LongTermMemory()
    memory.create_notes(person, [{"categories": ["Drinks"], "content": "Prefers tea"}])
    (note,) = memory.create_notes(person, [{"categories": ["Drinks"], "content": "Likes coffee"}])
    page = ops_page(language)
    page.goto(page.url.split("/admin/")[0] + f"/admin/agent_memory/memorynote/{note.id}/change/")
    page.fill("#id_content", "prefers TEA")
    page.locator("input[name=_save]").click()
    reason = page.locator("#content-main", has_text=SAID[language]["duplicate"])
    assert_in_view(page, page.locator(".errornote"))
    expect(reason).to_be_visible()
    expect(page.locator("#id_content")).to_have_value("prefers TEA")
    save_screenshot(page, f"admin-refused-edit-{language}.png")
    assert MemoryNote.objects.get(pk=note.id).content == "Likes coffee"


@pytest.mark.parametrize("language", ["en", "ru"])
def test_an_edit_of_a_note_deleted_meanwhile_lands_on_the_add_form_with_the_text(
    ops_page,  # noqa: F811
    make_user,
    language,
):
    person = make_user("ann")
    memory = LongTermMemory()
    (note,) = memory.create_notes(person, [{"categories": ["Drinks"], "content": "Likes coffee"}])
    page = ops_page(language)
    page.goto(page.url.split("/admin/")[0] + f"/admin/agent_memory/memorynote/{note.id}/change/")
    page.fill("#id_content", "Likes coffee with oat milk")
    memory.delete_note(person, note.id, note.version, source="person")  # in another tab
    page.locator("input[name=_save]").click()
    assert_in_view(page, page.locator("ul.messagelist li.warning"))
    expect(page.locator("#id_content")).to_have_value("Likes coffee with oat milk")
    expect(page.locator("#id_categories")).to_have_value("Drinks")
    expect(page.locator("#id_user")).to_have_value(str(person.pk))
    save_screenshot(page, f"admin-deleted-meanwhile-{language}.png")
    page.locator("input[name=_save]").click()
    expect(page.locator("ul.messagelist li.success")).to_be_visible()
    assert list(MemoryNote.objects.filter(user=person).values_list("content", flat=True)) == [
        "Likes coffee with oat milk"
    ]
