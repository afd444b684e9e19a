"""The merge addresses over the real optimizer and ORM store (SPEC §7, §8)."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from agent_memory.models import MemoryNote
from tests.test_api_isolation import merge_for

BASE = "/api/chat/memory"

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(user) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


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
