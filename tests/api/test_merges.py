"""The merge addresses over the real optimizer and ORM store."""

from __future__ import annotations

import pytest

from agent_memory.models import MemoryNote
from tests.api.test_isolation import merge_for

BASE = "/api/chat/memory"

pytestmark = pytest.mark.django_db


def test_get_merges_lists_the_revertable_run_with_its_notes(api, user):
    run_id = merge_for(user)

    response = api.get(f"{BASE}/merges")

    assert response.status_code == 200
    (run,) = response.json()["merges"]
    assert run["id"] == run_id
    assert run["finished_at"]
    (group,) = run["groups"]
    assert group["merged"]["content"] == "Likes tea with milk."
    assert sorted(note["content"] for note in group["sources"]) == [
        "Likes tea with milk.",
        "Likes tea.",
    ]


def test_revert_merge_brings_the_originals_back(api, user):
    run_id = merge_for(user)

    response = api.post(f"{BASE}/merges/{run_id}/revert")

    assert response.status_code == 200
    assert response.json() == {"reverted": run_id}
    assert sorted(MemoryNote.objects.filter(user=user).values_list("content", flat=True)) == [
        "Likes tea with milk.",
        "Likes tea.",
    ]
    assert api.get(f"{BASE}/merges").json() == {"merges": []}


def test_revert_after_the_merged_note_changed_is_conflict(api, user):
    run_id = merge_for(user)
    merged = api.get(BASE).json()["notes"][0]
    edited = api.patch(
        f"{BASE}/{merged['id']}",
        {"categories": ["Drinks"], "content": "Likes black tea.", "version": merged["version"]},
        format="json",
    )
    assert edited.status_code == 200

    response = api.post(f"{BASE}/merges/{run_id}/revert")

    assert response.status_code == 409
    assert response.json()["error"]["kind"] == "conflict"
    assert list(MemoryNote.objects.filter(user=user).values_list("content", flat=True)) == [
        "Likes black tea."
    ]


# --- revert's other answers, over real merges -------------------------------------------------


def test_revert_that_would_pass_max_notes_is_409_limit_reached(api, user, settings):
    run_id = merge_for(user)
    added = api.post(BASE, {"categories": ["Work"], "content": "Works at Stripe."}, format="json")
    assert added.status_code == 201
    settings.AGENT_MEMORY = {"MAX_NOTES": 2}

    response = api.post(f"{BASE}/merges/{run_id}/revert")

    assert response.status_code == 409
    assert response.json()["error"]["kind"] == "limit_reached"
    assert sorted(MemoryNote.objects.filter(user=user).values_list("content", flat=True)) == [
        "Likes tea with milk.",
        "Works at Stripe.",
    ]
    assert [run["id"] for run in api.get(f"{BASE}/merges").json()["merges"]] == [run_id]


def test_revert_when_an_original_was_added_again_is_409_duplicate(api, user):
    run_id = merge_for(user)
    again = api.post(BASE, {"categories": ["Drinks"], "content": "Likes tea."}, format="json")
    assert again.status_code == 201

    response = api.post(f"{BASE}/merges/{run_id}/revert")

    assert response.status_code == 409
    assert response.json()["error"]["kind"] == "duplicate"
    assert MemoryNote.objects.filter(user=user).count() == 2


def test_revert_after_the_merged_note_was_deleted_is_409_conflict(api, user):
    run_id = merge_for(user)
    merged = api.get(BASE).json()["notes"][0]
    assert api.delete(f"{BASE}/{merged['id']}?version={merged['version']}").status_code == 204

    response = api.post(f"{BASE}/merges/{run_id}/revert")

    assert response.status_code == 409
    assert response.json()["error"]["kind"] == "conflict"
    assert MemoryNote.objects.filter(user=user).count() == 0


@pytest.mark.parametrize("run", ["999999", "abc"])
def test_revert_of_an_unknown_run_is_404_not_found(api, user, run):
    merge_for(user)

    response = api.post(f"{BASE}/merges/{run}/revert")

    assert response.status_code == 404
    assert response.json()["error"]["kind"] == "not_found"
    assert MemoryNote.objects.filter(user=user, source="merge").count() == 1


def test_revert_restores_ids_with_the_next_version(api, user):
    run_id = merge_for(user)
    sources = api.get(f"{BASE}/merges").json()["merges"][0]["groups"][0]["sources"]

    assert api.post(f"{BASE}/merges/{run_id}/revert").status_code == 200

    restored = {note["id"]: note["version"] for note in api.get(BASE).json()["notes"]}
    assert restored == {source["id"]: source["version"] + 1 for source in sources}


def test_a_note_key_is_not_a_run_id_anywhere(api, client, user):
    """``memory:<id>`` names a note; as a run id it is no run, even when the number is one."""
    from agent_memory import LongTermMemory
    from agent_memory.errors import NoteNotFound

    run_id = merge_for(user)
    key = f"memory:{run_id}"

    assert api.post(f"{BASE}/merges/{key}/revert").status_code == 404
    client.force_login(user)
    assert client.post(f"/memory/merges/{key}/revert").status_code == 404
    with pytest.raises(NoteNotFound):
        LongTermMemory().revert_merge(user, key)
    assert MemoryNote.objects.filter(user=user, source="merge").count() == 1
    assert api.post(f"{BASE}/merges/{run_id}/revert").status_code == 200


def test_revert_with_django_s_test_client_and_its_empty_multipart_body_works(user):
    from django.test import Client

    run_id = merge_for(user)
    client = Client()
    client.force_login(user)

    response = client.post(f"{BASE}/merges/{run_id}/revert")

    assert response.status_code == 200, response.content
    assert response.json() == {"reverted": run_id}
    assert MemoryNote.objects.filter(user=user).count() == 2


@pytest.mark.parametrize(
    "content_type",
    ["application/octet-stream", "text/plain", "application/x-www-form-urlencoded"],
)
def test_revert_with_an_empty_body_of_any_content_type_works(api, user, content_type):
    run_id = merge_for(user)

    response = api.post(f"{BASE}/merges/{run_id}/revert", b"", content_type=content_type)

    assert response.status_code == 200, response.content
    assert response.json() == {"reverted": run_id}


def test_revert_of_an_unknown_or_foreign_run_is_404_before_its_body_is_read(api, user, make_user):
    from django.test import Client

    someone_else = make_user()
    their_run = merge_for(someone_else)
    client = Client()
    client.force_login(user)
    for run_id in (their_run, their_run + 1000):
        # An empty form, and a body no parser reads: the run decides first.
        assert client.post(f"{BASE}/merges/{run_id}/revert").status_code == 404
        unreadable = api.post(
            f"{BASE}/merges/{run_id}/revert", b"\x00{not json", content_type="image/png"
        )
        assert unreadable.status_code == 404, unreadable.content
        assert unreadable.json()["error"]["kind"] == "not_found"
    assert MemoryNote.objects.filter(user=someone_else).count() == 1
