"""The HTTP API of the person's controls: pinning through POST and PATCH, and the memory
switch at ``{base}/memory/settings``."""

from __future__ import annotations

from typing import Any

import pytest

from agent_memory import get_memory
from tests.api.test_endpoints import BASE, add, assert_error

pytestmark = pytest.mark.django_db

SETTINGS = f"{BASE}/settings"


def post(api: Any, body: Any) -> Any:
    return api.post(BASE, body, format="json")


def patch(api: Any, note_id: int, body: Any) -> Any:
    return api.patch(f"{BASE}/{note_id}", body, format="json")


def test_post_with_pinned_true_pins_the_new_note(api, user):
    response = post(api, {"categories": ["Rules"], "content": "Never suggest npm.", "pinned": True})
    assert response.status_code == 201, response.content
    note = response.json()["note"]
    assert note["pinned"] is True
    assert get_memory().note(user, note["id"]).pinned
    assert add(api, "Likes tea.")["pinned"] is False


def test_patch_pins_and_unpins_with_the_version_alone(api, user):
    note = add(api, "Never suggest npm.")
    pinned = patch(api, note["id"], {"version": 1, "pinned": True})
    assert pinned.status_code == 200, pinned.content
    assert (pinned.json()["note"]["pinned"], pinned.json()["note"]["version"]) == (True, 2)
    assert pinned.json()["note"]["content"] == "Never suggest npm."
    unpinned = patch(api, note["id"], {"version": 2, "pinned": False})
    assert unpinned.json()["note"]["pinned"] is False
    assert_error(patch(api, note["id"], {"version": 2, "pinned": True}), 409, "stale_version")


def test_patch_of_the_text_keeps_the_pin_unless_it_says(api, user):
    note = post(api, {"categories": ["Rules"], "content": "No npm.", "pinned": True}).json()["note"]
    edited = patch(api, note["id"], {"version": 1, "categories": ["Rules"], "content": "No yarn."})
    assert edited.json()["note"]["pinned"] is True
    both = patch(
        api,
        note["id"],
        {"version": 2, "categories": ["Rules"], "content": "No pnpm.", "pinned": False},
    )
    assert both.json()["note"] == {**both.json()["note"], "pinned": False, "content": "No pnpm."}


def test_the_person_deletes_a_pinned_note(api, user):
    note = post(api, {"categories": ["Rules"], "content": "No npm.", "pinned": True}).json()["note"]
    assert api.delete(f"{BASE}/{note['id']}?version=1").status_code == 204
    assert get_memory().notes(user) == []


@pytest.mark.parametrize("value", ["true", 1, None, "yes"])
def test_pinned_must_be_true_or_false(api, value):
    response = post(api, {"categories": ["Rules"], "content": "No npm.", "pinned": value})
    assert "true or false" in assert_error(response, 400, "invalid")


def test_patch_without_text_or_pin_names_the_missing_fields(api):
    note = add(api, "Likes tea.")
    message = assert_error(patch(api, note["id"], {"version": 1}), 400, "invalid")
    assert "categories" in message and "content" in message
    assert "content" in assert_error(
        patch(api, note["id"], {"version": 1, "categories": ["Food"]}), 400, "invalid"
    )


def test_pinning_past_half_of_the_block_is_409_limit_reached(api, settings):
    settings.AGENT_MEMORY = {"MAX_BLOCK_CHARS": 400}
    post(api, {"categories": ["Rules"], "content": "a" * 80, "pinned": True})
    note = add(api, "b" * 120, ["Rules"])
    message = assert_error(
        patch(api, note["id"], {"version": 1, "pinned": True}), 409, "limit_reached"
    )
    assert "unpin one" in message


def test_the_list_shows_which_notes_are_pinned(api):
    post(api, {"categories": ["Rules"], "content": "No npm.", "pinned": True})
    add(api, "Likes tea.")
    notes = api.get(BASE).json()["notes"]
    assert sorted((n["content"], n["pinned"]) for n in notes) == [
        ("Likes tea.", False),
        ("No npm.", True),
    ]


# --- the switch ---------------------------------------------------------------------------------


def test_settings_say_memory_is_on_by_default(api):
    response = api.get(SETTINGS)
    assert response.status_code == 200
    assert response.json() == {"enabled": True}


def test_patch_settings_turns_memory_off_and_the_notes_stay(api, user):
    note = add(api, "Likes tea.")
    response = api.patch(SETTINGS, {"enabled": False}, format="json")
    assert response.json() == {"enabled": False}
    assert api.get(SETTINGS).json() == {"enabled": False}
    memory = get_memory()
    assert not memory.enabled(user)
    assert memory.begin_turn(user, None).text == ""
    # Still listed, editable, exportable.
    assert [n["id"] for n in api.get(BASE).json()["notes"]] == [note["id"]]
    edited = patch(
        api, note["id"], {"version": 1, "categories": ["Food"], "content": "Likes coffee."}
    )
    assert edited.status_code == 200
    assert api.get(f"{BASE}/export").json()["notes"][0]["content"] == "Likes coffee."
    assert api.patch(SETTINGS, {"enabled": True}, format="json").json() == {"enabled": True}
    assert "Likes coffee." in memory.begin_turn(user, None).text


def test_the_switch_is_per_person(api, user, other_user):
    api.patch(SETTINGS, {"enabled": False}, format="json")
    assert get_memory().enabled(other_user)


@pytest.mark.parametrize("body", [{}, {"enabled": "false"}, {"enabled": 0}, [], {"on": False}])
def test_settings_take_a_boolean_enabled(api, user, body):
    assert_error(api.patch(SETTINGS, body, format="json"), 400, "invalid")
    assert get_memory().enabled(user)


def test_settings_need_a_person(client):
    assert client.get(SETTINGS).status_code in (401, 403)
