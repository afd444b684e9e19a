"""Two persons: one person's notes are, to the other, exactly like notes that do not exist."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import override_settings
from rest_framework.test import APIClient

from agent_memory import LongTermMemory
from agent_memory.models import MemoryNote
from tests import scripted_model

BASE = "/api/chat/memory"

pytestmark = pytest.mark.django_db


def client_for(person) -> APIClient:
    client = APIClient()
    client.force_login(person)
    return client


def snapshot(note_id: int) -> dict[str, Any]:
    return MemoryNote.objects.filter(pk=note_id).values().get()


def answer(response) -> tuple[int, Any]:
    return response.status_code, response.json()


@pytest.fixture
def owner(make_user):
    return make_user("owner")


@pytest.fixture
def intruder(make_user):
    return make_user("intruder")


@pytest.fixture
def owners_note(owner) -> dict[str, Any]:
    response = client_for(owner).post(
        BASE, {"categories": ["Preferences"], "content": "Address me informally."}, format="json"
    )
    assert response.status_code == 201
    return response.json()["note"]


#: Requests the intruder makes on the owner's note. Each is answered exactly as it would be for a
#: missing note: 404 ``not_found``, except a body that breaks a note rule (400 ``invalid``, which
#: a missing note answers too, before any note is looked up).
REQUESTS = {
    "patch at its version": lambda c, n: c.patch(
        f"{BASE}/{n['id']}",
        {"categories": ["Stolen"], "content": "Overwritten.", "version": n["version"]},
        format="json",
    ),
    "patch at another version": lambda c, n: c.patch(
        f"{BASE}/{n['id']}",
        {"categories": ["Stolen"], "content": "Overwritten.", "version": n["version"] + 5},
        format="json",
    ),
    "patch that breaks a rule": lambda c, n: c.patch(
        f"{BASE}/{n['id']}",
        {"categories": ["Stolen"], "content": "   ", "version": n["version"]},
        format="json",
    ),
    "delete at its version": lambda c, n: c.delete(f"{BASE}/{n['id']}?version={n['version']}"),
    "delete at another version": lambda c, n: c.delete(f"{BASE}/{n['id']}?version=9"),
}


@pytest.mark.parametrize("name", list(REQUESTS))
def test_another_person_s_note_answers_exactly_like_a_missing_one(
    name, owner, intruder, owners_note
):
    request = REQUESTS[name]
    before = snapshot(owners_note["id"])

    on_their_note = answer(request(client_for(intruder), owners_note))

    expected = (400, "invalid") if name == "patch that breaks a rule" else (404, "not_found")
    assert (on_their_note[0], on_their_note[1]["error"]["kind"]) == expected
    assert snapshot(owners_note["id"]) == before  # nothing changed

    # The same request once the note really is gone: not a byte of difference.
    deleted = client_for(owner).delete(f"{BASE}/{owners_note['id']}?version=1")
    assert deleted.status_code == 204
    assert answer(request(client_for(intruder), owners_note)) == on_their_note


def test_listing_shows_only_the_person_s_own_notes(owner, intruder, owners_note):
    mine = client_for(intruder).post(
        BASE, {"categories": ["Home"], "content": "Lives in Porto."}, format="json"
    )

    body = client_for(intruder).get(BASE).json()

    assert [note["id"] for note in body["notes"]] == [mine.json()["note"]["id"]]
    assert body["counts"]["total"] == 1
    assert body["counts"]["shown"] == 1


def test_erase_all_erases_only_the_person_s_own_notes(owner, intruder, owners_note):
    before = snapshot(owners_note["id"])

    response = client_for(intruder).delete(BASE)

    assert answer(response) == (200, {"deleted": 0})
    assert snapshot(owners_note["id"]) == before


def test_another_person_s_text_is_not_a_duplicate(owner, intruder, owners_note):
    response = client_for(intruder).post(
        BASE, {"categories": ["Preferences"], "content": "Address me informally."}, format="json"
    )

    assert response.status_code == 201
    assert snapshot(owners_note["id"])["content"] == "Address me informally."


@override_settings(AGENT_MEMORY={"MAX_NOTES": 1})
def test_another_person_s_notes_do_not_count_towards_the_limits(owner, intruder, owners_note):
    response = client_for(intruder).post(
        BASE, {"categories": ["Home"], "content": "Lives in Porto."}, format="json"
    )

    assert response.status_code == 201


def merge_for(person) -> int:
    """Let the optimizer merge two of ``person``'s notes (a scripted model); the run's id."""
    memory = LongTermMemory()
    first, second = memory.create_notes(
        person,
        [
            {"categories": ["Drinks"], "content": "Likes tea."},
            {"categories": ["Drinks"], "content": "Likes tea with milk."},
        ],
    )
    model = scripted_model.configure(
        "api-isolation",
        scripted_model.groups(
            {
                "ids": [first.id, second.id],
                "categories": ["Drinks"],
                "content": "Likes tea with milk.",
            }
        ),
    )
    with override_settings(AGENT_MEMORY={"MODELS": {"default": model}}):
        result = memory.optimize(person, force=True)
    assert result.applied == 1
    return result.run_id


def test_merge_addresses_do_not_reach_another_person_s_merges(owner, intruder):
    run_id = merge_for(owner)
    owners_notes = list(MemoryNote.objects.filter(user=owner).values())
    client = client_for(intruder)

    assert answer(client.get(f"{BASE}/merges")) == (200, {"merges": []})
    on_their_run = answer(client.post(f"{BASE}/merges/{run_id}/revert"))

    assert on_their_run[0] == 404
    assert on_their_run[1]["error"]["kind"] == "not_found"
    assert list(MemoryNote.objects.filter(user=owner).values()) == owners_notes
    assert [run["id"] for run in client_for(owner).get(f"{BASE}/merges").json()["merges"]] == [
        run_id
    ]

    # Once the owner has reverted it, the run is really gone: the same answer.
    assert client_for(owner).post(f"{BASE}/merges/{run_id}/revert").status_code == 200
    assert answer(client.post(f"{BASE}/merges/{run_id}/revert")) == on_their_run
