"""Reverting merges in admin: a whole run is reverted group by group, so a group that cannot
be reverted (its merged note was edited, or no room is left) no longer blocks the others, and
each one that could not be is named with its reason, in English and Russian."""

from __future__ import annotations

from html import unescape

import pytest
from django.test import override_settings

from agent_memory.models import MemoryNote, MergedNoteSnapshot, MergeRun
from agent_memory.site import get_memory
from tests.browser.test_screen_revert_groups import two_group_run

from .admin_pages import page

RUNS = "/admin/agent_memory/mergerun/"

MESSAGES = {
    "en": {
        "done": "Merge {run}: Merge reverted: the original notes are back.",
        "one": "Merge {run}: group {numbers} reverted, its original notes are back.",
        "conflict": "Group {group} of merge {run}: This merge can’t be reverted: the merged note "
        "was changed or deleted after the merge.",
        "full": "Group {group} of merge {run}: Reverting would bring back more notes than your "
        "memory can hold.",
        "gone": "Merge {run}: This merge can no longer be reverted",
    },
    "ru": {
        "done": "Объединение {run}: Объединение отменено: исходные заметки вернулись.",
        "one": "Объединение {run}: группа {numbers} отменена, её исходные заметки вернулись.",
        "conflict": "Группа {group} объединения {run}: Это объединение нельзя отменить: "
        "объединённую заметку изменили или удалили после объединения.",
        "full": "Группа {group} объединения {run}: Отмена вернула бы больше заметок, чем "
        "помещается в память.",
        "gone": "Объединение {run}: Это объединение больше нельзя отменить",
    },
}


def revert_runs(client, language, *run_ids):
    response = client.post(
        RUNS,
        {"action": "revert_runs", "_selected_action": list(run_ids)},
        follow=True,
        HTTP_ACCEPT_LANGUAGE=language,
    )
    assert response.status_code == 200
    return unescape(page(response))


def edit_merged_note(person, run_id, group_index):
    """Change the merged note of one group after the merge: that group can no longer be
    reverted."""
    memory = get_memory()
    merged = MergedNoteSnapshot.objects.get(run_id=run_id, group_index=group_index)
    note = memory.note(person, merged.merged_note_id)
    memory.update_note(
        person, note.id, note.version, note.categories, note.content + " (edited)", source="person"
    )


def contents(person):
    return sorted(MemoryNote.objects.filter(user=person).values_list("content", flat=True))


def reverted_groups(run_id):
    return sorted(int(item["index"]) for item in MergeRun.objects.get(pk=run_id).reverted or [])


@pytest.mark.parametrize("language", ["en", "ru"])
def test_a_conflicting_group_does_not_block_the_rest_of_the_run(client, ops, ann, language):
    run_id, _notes = two_group_run(ann)
    edit_merged_note(ann, run_id, 0)
    html = revert_runs(client, language, run_id)
    said = MESSAGES[language]
    assert said["one"].format(run=run_id, numbers=2) in html
    assert said["conflict"].format(run=run_id, group=1) in html
    assert said["done"].format(run=run_id) not in html
    # The porridge group is back as it was; the edited tea note stays, still merged.
    assert contents(ann) == [
        "Eats porridge",
        "Eats porridge at 7",
        "Prefers tea, no sugar (edited)",
    ]
    assert reverted_groups(run_id) == [1]
    assert list(
        MergedNoteSnapshot.objects.filter(run_id=run_id).values_list("group_index", flat=True)
    ) == [0]


@pytest.mark.parametrize("language", ["en", "ru"])
def test_a_group_without_room_is_named_and_the_one_with_room_is_reverted(
    client, ops, ann, language
):
    run_id, _notes = two_group_run(ann)
    # Two merged notes now; reverting one group brings back two notes for one: three in all.
    with override_settings(AGENT_MEMORY={"MAX_NOTES": 3}):
        html = revert_runs(client, language, run_id)
    said = MESSAGES[language]
    assert said["one"].format(run=run_id, numbers=1) in html
    assert said["full"].format(run=run_id, group=2) in html
    assert contents(ann) == ["Eats porridge at 7", "Prefers tea", "Takes no sugar in tea"]
    assert reverted_groups(run_id) == [0]


@pytest.mark.parametrize("language", ["en", "ru"])
def test_a_whole_run_reverted_says_so_once_and_a_second_time_says_it_is_gone(
    client, ops, ann, language
):
    run_id, notes = two_group_run(ann)
    html = revert_runs(client, language, run_id)
    said = MESSAGES[language]
    assert said["done"].format(run=run_id) in html
    assert "errornote" not in html and 'class="error"' not in html
    assert contents(ann) == sorted(note.content for note in notes)
    assert reverted_groups(run_id) == [0, 1]
    run = MergeRun.objects.get(pk=run_id)
    assert run.reverted_at is not None
    again = revert_runs(client, language, run_id)
    assert said["gone"].format(run=run_id) in again
    assert contents(ann) == sorted(note.content for note in notes)


def test_a_run_with_one_group_left_reverts_that_group_as_the_run(client, ops, ann):
    run_id, notes = two_group_run(ann)
    get_memory().revert_merge(ann, run_id, group=1)
    html = revert_runs(client, "en", run_id)
    assert MESSAGES["en"]["done"].format(run=run_id) in html
    assert contents(ann) == sorted(note.content for note in notes)
    detail = page(client.get(f"{RUNS}{run_id}/change/"))
    applied = detail[detail.index("field-applied_groups") :]
    applied = applied[: applied.index("field-reverted_groups")]
    assert "Group" not in applied  # every group is listed under the reverted ones now
    listing = page(client.get(RUNS))
    assert "of 2 groups)" not in listing


def test_every_group_refused_is_named_and_nothing_changes(client, ops, ann):
    run_id, _notes = two_group_run(ann)
    edit_merged_note(ann, run_id, 0)
    edit_merged_note(ann, run_id, 1)
    before = contents(ann)
    html = revert_runs(client, "en", run_id)
    for group in (1, 2):
        assert MESSAGES["en"]["conflict"].format(run=run_id, group=group) in html
    assert "reverted, its original notes are back" not in html
    assert MESSAGES["en"]["done"].format(run=run_id) not in html
    assert contents(ann) == before
    assert reverted_groups(run_id) == []


def test_staff_without_the_right_to_change_notes_revert_nothing(client, db, ann):
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Permission

    viewer = get_user_model().objects.create_user("viewer", password="pw", is_staff=True)
    viewer.user_permissions.add(
        *Permission.objects.filter(codename__in=["view_mergerun", "delete_mergerun"])
    )
    client.force_login(viewer)
    run_id, _notes = two_group_run(ann)
    before = contents(ann)
    response = client.post(
        RUNS, {"action": "revert_runs", "_selected_action": [run_id]}, follow=True
    )
    assert "Reverting a merge needs the right to change notes." in page(response)
    assert contents(ann) == before
