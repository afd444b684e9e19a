"""Revert per group, over HTTP, on the screen and in admin; a reverted group is never merged
again."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.messages import get_messages
from django.test import Client, override_settings
from rest_framework.test import APIClient

from agent_memory import LongTermMemory
from agent_memory.models import MemoryNote, MergedNoteSnapshot, MergeRun
from agent_memory.stores.orm import DjangoStore
from tests import scripted_model

BASE = "/api/chat/memory"


def two_groups(memory: LongTermMemory, person) -> tuple[int, list]:
    """Four notes merged by one run in two groups; returns the run id and the four notes."""
    notes = memory.create_notes(
        person,
        [
            {"categories": ["Drinks"], "content": "Likes tea."},
            {"categories": ["Drinks"], "content": "Likes tea with milk."},
            {"categories": ["Food"], "content": "Eats porridge."},
            {"categories": ["Food"], "content": "Eats porridge for breakfast."},
        ],
    )
    model = scripted_model.configure("revert-groups", proposal(notes))
    with override_settings(AGENT_MEMORY={"MODELS": {"default": model}}):
        result = memory.optimize(person, force=True)
    assert (result.applied, result.rejected) == (2, 0)
    return result.run_id, notes


def proposal(notes) -> str:
    tea1, tea2, food1, food2 = notes
    return scripted_model.groups(
        {"ids": [tea1.key, tea2.key], "categories": ["Drinks"], "content": "Likes tea with milk."},
        {
            "ids": [food1.key, food2.key],
            "categories": ["Food"],
            "content": "Eats porridge for breakfast.",
        },
    )


def contents(memory, person) -> list[str]:
    return sorted(note.content for note in memory.notes(person))


# --- Python API, both stores ------------------------------------------------------------------


def test_reverting_one_group_leaves_the_other_applied_and_revertable(memory, person):
    run_id, _ = two_groups(memory, person)

    restored = memory.revert_merge(person, run_id, group=0)

    assert sorted(note.content for note in restored) == ["Likes tea with milk.", "Likes tea."]
    (run,) = memory.merges(person)
    assert [group.group for group in run.groups] == [1]
    memory.revert_merge(person, run_id, group=1)
    assert memory.merges(person) == []
    assert contents(memory, person) == [
        "Eats porridge for breakfast.",
        "Eats porridge.",
        "Likes tea with milk.",
        "Likes tea.",
    ]


def test_editing_one_merged_note_does_not_block_reverting_the_other(memory, person):
    run_id, _ = two_groups(memory, person)
    food = next(note for note in memory.notes(person) if note.content.startswith("Eats"))
    memory.update_note(person, food.id, food.version, ["Food"], "Eats oat porridge daily.")

    memory.revert_merge(person, run_id, group=0)

    assert "Likes tea." in contents(memory, person)
    with pytest.raises(Exception) as raised:
        memory.revert_merge(person, run_id, group=1)
    assert getattr(raised.value, "kind", None) == "conflict"


def test_a_reverted_group_is_never_applied_again(memory, person):
    run_id, notes = two_groups(memory, person)
    memory.revert_merge(person, run_id, group=0)
    tea1, tea2 = notes[:2]
    again = scripted_model.groups(
        {"ids": [tea1.key, tea2.key], "categories": ["Drinks"], "content": "Likes tea with milk."}
    )
    model = scripted_model.configure("revert-groups-again", again, again, again)

    for _ in range(3):
        with override_settings(AGENT_MEMORY={"MODELS": {"default": model}}):
            result = memory.optimize(person, force=True)
        assert result.applied == 0
        (rejection,) = memory.store.list_optimization_runs(person, limit=1)[0].rejected
        assert rejection["code"] == "kept_apart"
        assert "Likes tea." in contents(memory, person)
        prompt = scripted_model.CALLS[-1][-1]["content"]
        assert f"- {tea1.key}, {tea2.key}" in prompt.split("\n")


def test_an_unknown_group_is_not_found(memory, person):
    run_id, _ = two_groups(memory, person)
    with pytest.raises(Exception) as raised:
        memory.revert_merge(person, run_id, group=7)
    assert getattr(raised.value, "kind", None) == "not_found"
    assert "group 7" in raised.value.message


def signed_in(client_class, user):
    """A two-group run of ``user`` and a client of ``client_class`` logged in as them."""
    memory = LongTermMemory(store=DjangoStore())
    run_id, _ = two_groups(memory, user)
    client = client_class()
    client.force_login(user)
    return memory, run_id, client


# --- HTTP ---------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_http_revert_of_one_group_answers_it_and_keeps_the_other(user):
    _, run_id, api = signed_in(APIClient, user)

    response = api.post(f"{BASE}/merges/{run_id}/revert", {"group": 0}, format="json")

    assert response.status_code == 200
    assert response.json() == {"reverted": run_id, "group": 0}
    (run,) = api.get(f"{BASE}/merges").json()["merges"]
    assert [group["group"] for group in run["groups"]] == [1]
    again = api.post(f"{BASE}/merges/{run_id}/revert", {"group": 1}, format="json")
    assert again.json() == {"reverted": run_id, "group": 1}
    assert api.get(f"{BASE}/merges").json() == {"merges": []}


@pytest.mark.django_db
@pytest.mark.parametrize("group", [-1, "x", True])
def test_http_revert_with_a_bad_group_is_invalid(user, group):
    memory, run_id, api = signed_in(APIClient, user)

    response = api.post(f"{BASE}/merges/{run_id}/revert", {"group": group}, format="json")

    assert response.status_code == 400
    assert response.json()["error"]["kind"] == "invalid"
    assert len(memory.merges(user)[0].groups) == 2


@pytest.mark.django_db
def test_http_revert_with_a_body_that_is_not_json_is_invalid(user):
    memory, run_id, api = signed_in(APIClient, user)

    response = api.generic(
        "POST", f"{BASE}/merges/{run_id}/revert", b"\x0b\xfas[", content_type="application/json"
    )

    assert response.status_code == 400
    assert response.json()["error"]["kind"] == "invalid"
    assert len(memory.merges(user)[0].groups) == 2


# --- the screen ---------------------------------------------------------------------------------


@pytest.mark.django_db
def test_screen_revert_button_of_one_group_reverts_only_it(user):
    memory, run_id, client = signed_in(Client, user)
    page = client.get("/memory/").content.decode()
    # One "Revert…" per group, each opening its own confirmation.
    assert page.count(f'href="/memory/merges/{run_id}/revert?group=') == 2

    response = client.post(f"/memory/merges/{run_id}/revert", {"group": "1"})

    assert response.status_code == 302
    (run,) = memory.merges(user)
    assert [group.group for group in run.groups] == [0]


@pytest.mark.django_db
def test_screen_warns_before_an_edit_that_makes_a_merge_unrevertable(user):
    memory = LongTermMemory(store=DjangoStore())
    two_groups(memory, user)
    merged = next(note for note in memory.notes(user) if note.source == "merge")
    plain = memory.create_notes(user, [{"categories": ["X"], "content": "Plain note."}])[0]
    client = Client()
    client.force_login(user)
    warning = "that merge can no longer be reverted"

    assert warning in client.get(f"/memory/notes/{merged.id}/edit").content.decode()
    assert warning not in client.get(f"/memory/notes/{plain.id}/edit").content.decode()


# --- admin --------------------------------------------------------------------------------------


@pytest.fixture
def staff(db):
    user = get_user_model().objects.create_superuser("ops", "ops@example.com", "pw-for-tests")
    client = Client()
    client.force_login(user)
    return client


def test_admin_reverts_a_single_group_and_the_other_stays(staff, user):
    memory = LongTermMemory(store=DjangoStore())
    run_id, _ = two_groups(memory, user)
    snapshot = MergedNoteSnapshot.objects.get(run_id=run_id, group_index=0)

    response = staff.post(
        "/admin/agent_memory/mergednotesnapshot/",
        {"action": "revert_groups", "_selected_action": [snapshot.pk]},
    )

    assert response.status_code == 302
    texts = [str(message) for message in get_messages(response.wsgi_request)]
    assert texts == [f"Group 1 of merge {run_id}: Merge reverted: the original notes are back."]
    (run,) = memory.merges(user)
    assert [group.group for group in run.groups] == [1]
    assert MergeRun.objects.get(pk=run_id).reverted[0]["index"] == 0


def test_admin_revert_of_a_run_reverts_the_other_group_and_reports_the_conflict(staff, user):
    memory = LongTermMemory(store=DjangoStore())
    run_id, _ = two_groups(memory, user)
    merged = MemoryNote.objects.filter(user=user, source="merge").first()
    memory.update_note(user, merged.pk, merged.version, ["Drinks"], "Changed by hand.")
    edited = MergedNoteSnapshot.objects.get(run_id=run_id, merged_note_id=merged.pk).group_index

    response = staff.post(
        "/admin/agent_memory/mergerun/", {"action": "revert_runs", "_selected_action": [run_id]}
    )

    reverted, refused = [str(message) for message in get_messages(response.wsgi_request)]
    assert reverted == (
        f"Merge {run_id}: group {2 - edited} reverted, its original notes are back."
    )
    assert refused.startswith(f"Group {edited + 1} of merge {run_id}: This merge can’t be reverted")
    left = MergedNoteSnapshot.objects.filter(run_id=run_id)
    assert list(left.values_list("group_index", flat=True)) == [edited]
