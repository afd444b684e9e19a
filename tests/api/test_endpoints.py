"""The HTTP API: one test per row of the endpoint table and per error kind."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from django.test import override_settings
from django.urls import reverse
from rest_framework.authentication import (
    BaseAuthentication,
    BasicAuthentication,
    SessionAuthentication,
)
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.test import APIClient

from agent_memory import LongTermMemory, get_memory
from agent_memory.api.views import MemoryAPIView
from agent_memory.errors import DuplicateNote, LimitReached, MergeConflict, NoteNotFound
from agent_memory.models import MemoryNote
from tests.scripted_store import scripted_merge

BASE = "/api/chat/memory"

pytestmark = pytest.mark.django_db


def add(client: APIClient, content: str, categories: list[str] | None = None) -> dict[str, Any]:
    response = client.post(
        BASE, {"categories": categories or ["Preferences"], "content": content}, format="json"
    )
    assert response.status_code == 201, response.content
    return response.json()["note"]


def assert_error(response: Any, status: int, kind: str) -> str:
    assert response.status_code == status, response.content
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"kind", "message"}
    assert body["error"]["kind"] == kind
    assert body["error"]["message"]
    return body["error"]["message"]


def use_store(settings: Any, backend: str, **options: Any) -> Any:
    """Serve the site's memory from the store ``backend`` (``AGENT_MEMORY["STORE"]``)."""
    settings.AGENT_MEMORY = {"STORE": {"BACKEND": backend, "OPTIONS": options}}
    return get_memory().store


# --- the addresses --------------------------------------------------------------------------


def test_urls_are_exactly_the_endpoint_table():
    assert reverse("agent_memory_api:memory-list") == BASE
    assert reverse("agent_memory_api:memory-detail", args=[12]) == f"{BASE}/12"
    assert reverse("agent_memory_api:memory-merges") == f"{BASE}/merges"
    assert reverse("agent_memory_api:memory-revert-merge", args=[7]) == f"{BASE}/merges/7/revert"


# --- one test per row of the table ----------------------------------------------------------


def test_get_memory_lists_notes_newest_first_with_counts(api, user):
    first = add(api, "Address me informally.")
    second = add(api, "Prefers pnpm over npm.", ["Tools"])

    response = api.get(BASE)

    assert response.status_code == 200
    body = response.json()
    assert [note["id"] for note in body["notes"]] == [second["id"], first["id"]]
    assert body["notes"][0] == {
        "id": second["id"],
        "version": 1,
        "categories": ["Tools"],
        "content": "Prefers pnpm over npm.",
        "updated_at": second["updated_at"],
        "source": "person",
        "pinned": False,
        "created_by": "person",
        "valid_until": None,
    }
    assert body["counts"] == {"total": 2, "limit": 200, "shown": 2}


def test_get_memory_with_q_searches_with_the_tool_s_ranking(api, user):
    add(api, "Address me informally.")
    tools = add(api, "Prefers pnpm over npm.", ["Tools"])
    add(api, "Lives in Riga.", ["Home"])

    response = api.get(BASE, {"q": "pnpm tools"})

    assert response.status_code == 200
    body = response.json()
    assert body["notes"][0] == tools
    assert body == LongTermMemory().call_tool(user, {"action": "search", "query": "pnpm tools"})
    assert api.get(BASE, {"q": f"memory:{tools['id']}"}).json() == {"notes": [tools], "total": 1}


@pytest.mark.parametrize("query", ["", "   ", "x" * 501])
def test_get_memory_with_an_empty_or_long_q_is_invalid(api, query):
    message = assert_error(api.get(BASE, {"q": query}), 400, "invalid")
    assert "words" in message


@override_settings(AGENT_MEMORY={"MAX_NOTES": 7, "MAX_BLOCK_CHARS": 800})
def test_counts_shown_is_the_notes_that_fit_in_the_block(api, user):
    for number in range(5):
        add(api, f"Fact number {number}: " + "words " * 20)

    counts = api.get(BASE).json()["counts"]

    fitting = [block for block in LongTermMemory().blocks(user) if not block.hidden]
    assert counts["total"] == 5
    assert counts["limit"] == 7
    assert 0 < counts["shown"] < 5
    assert counts["shown"] == len(fitting)


def test_post_memory_adds_a_note_written_by_the_person(api, user):
    response = api.post(
        BASE, {"categories": [" Preferences ", "Language"], "content": " Hi. "}, format="json"
    )

    assert response.status_code == 201
    note = response.json()["note"]
    assert set(note) == {
        *("id", "version", "categories", "content", "updated_at"),
        *("source", "created_by", "valid_until", "pinned"),
    }
    assert note["categories"] == ["Preferences", "Language"]
    assert note["content"] == "Hi."
    assert note["version"] == 1
    row = MemoryNote.objects.get(pk=note["id"])
    assert row.user_id == user.pk
    assert row.source == "person"


def test_patch_note_replaces_categories_and_text_and_bumps_version(api, user):
    note = add(api, "Likes tea.")

    response = api.patch(
        f"{BASE}/{note['id']}",
        {"categories": ["Food"], "content": "Likes green tea.", "version": 1},
        format="json",
    )

    assert response.status_code == 200
    changed = response.json()["note"]
    assert changed["id"] == note["id"]
    assert changed["version"] == 2
    assert changed["categories"] == ["Food"]
    assert changed["content"] == "Likes green tea."
    assert MemoryNote.objects.get(pk=note["id"]).source == "person"


def test_delete_note_with_its_version_answers_204(api, user):
    note = add(api, "Likes tea.")

    response = api.delete(f"{BASE}/{note['id']}?version=1")

    assert response.status_code == 204
    assert response.content == b""
    assert not MemoryNote.objects.filter(pk=note["id"]).exists()


def test_delete_memory_erases_every_note_of_the_person(api, user, other_user):
    add(api, "Likes tea.")
    add(api, "Lives in Lisbon.", ["Home"])
    LongTermMemory().create_notes(other_user, [{"categories": ["A"], "content": "Kept."}])

    response = api.delete(BASE)

    assert response.status_code == 200
    assert response.json() == {"deleted": 2}
    assert api.get(BASE).json()["notes"] == []
    assert [note.content for note in LongTermMemory().notes(other_user)] == ["Kept."]


def test_get_merges_is_not_found_when_the_store_cannot_merge(api, settings):
    use_store(settings, "tests.scripted_store.NoteOnlyStore")

    assert_error(api.get(f"{BASE}/merges"), 404, "not_found")


def test_revert_merge_is_not_found_when_the_store_cannot_merge(api, settings):
    use_store(settings, "tests.scripted_store.NoteOnlyStore")

    assert_error(api.post(f"{BASE}/merges/1/revert"), 404, "not_found")


def test_get_merges_answers_the_memory_s_revertable_runs(api, user, settings):
    options = scripted_merge(user, run_id=3)
    store = use_store(settings, "tests.scripted_store.ScriptedMergeStore", **options)
    (item,) = options["merged"]
    merged = LongTermMemory().note(user, item.merged_note_id)

    response = api.get(f"{BASE}/merges")

    assert response.status_code == 200
    assert response.json() == {
        "merges": [
            {
                "id": 3,
                "finished_at": options["runs"][0].finished_at.isoformat(),
                "groups": [
                    {
                        "group": 0,
                        "merged": merged.as_dict(),
                        "sources": [item.sources[0].as_dict()],
                    }
                ],
            }
        ]
    }
    assert store.calls == [("merges", user.pk)]


def test_revert_merge_answers_the_reverted_run(api, user, settings):
    store = use_store(settings, "tests.scripted_store.ScriptedMergeStore", **scripted_merge(user))

    response = api.post(f"{BASE}/merges/42/revert")

    assert response.status_code == 200
    assert response.json() == {"reverted": 42}
    assert store.calls[-1] == ("revert", user.pk, 42)


@pytest.mark.parametrize(
    ("error", "status", "kind"),
    [
        (MergeConflict("memory:9 changed after the merge."), 409, "conflict"),
        (LimitReached("Reverting would pass 200 notes."), 409, "limit_reached"),
        (DuplicateNote("memory:4 holds it already.", existing_id=4), 409, "duplicate"),
        (NoteNotFound("There is no merge 42."), 404, "not_found"),
    ],
)
def test_revert_merge_errors_keep_their_kind(api, user, settings, error, status, kind):
    options = scripted_merge(user, error=error)
    use_store(settings, "tests.scripted_store.ScriptedMergeStore", **options)

    message = assert_error(api.post(f"{BASE}/merges/42/revert"), status, kind)

    assert message == error.message


def test_merge_run_ids_that_are_not_numbers_are_not_found(api, user, settings):
    store = use_store(settings, "tests.scripted_store.ScriptedMergeStore", **scripted_merge(user))

    for run_id in ("abc", "0", "-3", "1" * 30):
        assert_error(api.post(f"{BASE}/merges/{run_id}/revert"), 404, "not_found")
    assert store.calls == []


# --- one test per error kind ----------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        {"categories": ["Preferences"], "content": "   "},
        {"categories": [], "content": "Likes tea."},
        {"categories": ["A", "B", "C", "D"], "content": "Likes tea."},
        {"categories": ["A/B"], "content": "Likes tea."},
        {"categories": ["A"], "content": "x" * 501},
        {"categories": ["Access"], "content": "my key is sk-abcdefghijklmnopqrstuvwxyz123456"},
        {"categories": ["Card"], "content": "card 4111 1111 1111 1111"},
    ],
)
def test_post_breaking_a_note_rule_is_invalid(api, body):
    assert_error(api.post(BASE, body, format="json"), 400, "invalid")
    assert not MemoryNote.objects.exists()


def test_secret_message_says_memory_is_not_for_secrets(api):
    message = assert_error(
        api.post(BASE, {"categories": ["A"], "content": "password: hunter22"}, format="json"),
        400,
        "invalid",
    )
    assert "password" in message.lower()


def test_post_same_text_in_a_shared_category_is_duplicate(api):
    note = add(api, "Likes  TEA.")

    message = assert_error(
        api.post(BASE, {"categories": ["preferences"], "content": "likes tea."}, format="json"),
        409,
        "duplicate",
    )
    assert f"memory:{note['id']}" in message
    assert MemoryNote.objects.count() == 1


def test_patch_into_a_duplicate_of_another_note_is_duplicate(api):
    add(api, "Likes tea.")
    other = add(api, "Likes coffee.")

    assert_error(
        api.patch(
            f"{BASE}/{other['id']}",
            {"categories": ["Preferences"], "content": "Likes tea.", "version": 1},
            format="json",
        ),
        409,
        "duplicate",
    )
    assert MemoryNote.objects.get(pk=other["id"]).content == "Likes coffee."


@override_settings(AGENT_MEMORY={"MAX_NOTES": 1})
def test_post_past_max_notes_is_limit_reached(api):
    add(api, "Likes tea.")

    message = assert_error(
        api.post(BASE, {"categories": ["B"], "content": "Lives in Lisbon."}, format="json"),
        409,
        "limit_reached",
    )
    assert "1" in message
    assert MemoryNote.objects.count() == 1


@override_settings(AGENT_MEMORY={"MAX_TOTAL_CHARS": 20})
def test_patch_past_max_total_chars_is_limit_reached(api):
    note = add(api, "Likes tea.")

    assert_error(
        api.patch(
            f"{BASE}/{note['id']}",
            {"categories": ["A"], "content": "Likes tea very, very much.", "version": 1},
            format="json",
        ),
        409,
        "limit_reached",
    )
    assert MemoryNote.objects.get(pk=note["id"]).version == 1


def test_patch_with_an_old_version_is_stale_version(api):
    note = add(api, "Likes tea.")
    body = {"categories": ["A"], "content": "Likes green tea.", "version": 1}
    assert api.patch(f"{BASE}/{note['id']}", body, format="json").status_code == 200

    message = assert_error(
        api.patch(f"{BASE}/{note['id']}", {**body, "content": "Likes black tea."}, format="json"),
        409,
        "stale_version",
    )
    assert "version 2" in message
    assert MemoryNote.objects.get(pk=note["id"]).content == "Likes green tea."


def test_delete_with_an_old_version_is_stale_version(api):
    note = add(api, "Likes tea.")

    assert_error(api.delete(f"{BASE}/{note['id']}?version=3"), 409, "stale_version")
    assert MemoryNote.objects.filter(pk=note["id"]).exists()


@pytest.mark.parametrize("method", ["patch", "delete"])
def test_unknown_id_is_not_found(api, method):
    body = {"categories": ["A"], "content": "Likes tea.", "version": 1}
    response = (
        api.patch(f"{BASE}/999999", body, format="json")
        if method == "patch"
        else api.delete(f"{BASE}/999999?version=1")
    )
    message = assert_error(response, 404, "not_found")
    assert "memory:999999" in message


@pytest.mark.parametrize("note_id", ["abc", "0", "-1", "1.5", "memory:1", "9" * 19])
def test_ids_in_the_url_that_are_not_note_ids_are_not_found(api, note_id):
    note = add(api, "Likes tea.")
    body = {"categories": ["A"], "content": "Changed.", "version": 1}

    assert_error(api.patch(f"{BASE}/{note_id}", body, format="json"), 404, "not_found")
    assert_error(api.delete(f"{BASE}/{note_id}?version=1"), 404, "not_found")
    assert MemoryNote.objects.get(pk=note["id"]).content == "Likes tea."


@pytest.mark.parametrize("query", ["", "?version=", "?version=abc", "?version=1.5", "?v=1"])
def test_delete_without_a_whole_version_is_invalid(api, query):
    note = add(api, "Likes tea.")

    message = assert_error(api.delete(f"{BASE}/{note['id']}{query}"), 400, "invalid")
    assert "version" in message
    assert MemoryNote.objects.filter(pk=note["id"]).exists()


@pytest.mark.parametrize("version", [0, -1, 10**30, "1", 1.5, True, None])
def test_patch_with_a_version_that_is_not_a_note_version_is_invalid(api, version):
    note = add(api, "Likes tea.")
    body = {"categories": ["A"], "content": "Changed.", "version": version}

    message = assert_error(api.patch(f"{BASE}/{note['id']}", body, format="json"), 400, "invalid")
    assert "version" in message
    assert MemoryNote.objects.get(pk=note["id"]).version == 1


def test_patch_without_version_is_invalid(api):
    note = add(api, "Likes tea.")

    message = assert_error(
        api.patch(f"{BASE}/{note['id']}", {"categories": ["A"], "content": "x"}, format="json"),
        400,
        "invalid",
    )
    assert message.startswith("version:")


def test_huge_version_is_stale_not_a_crash(api):
    note = add(api, "Likes tea.")
    body = {"categories": ["A"], "content": "Changed.", "version": 2**62}

    assert_error(api.patch(f"{BASE}/{note['id']}", body, format="json"), 409, "stale_version")
    assert_error(api.delete(f"{BASE}/{note['id']}?version={2**62}"), 409, "stale_version")


# --- who is asking ----------------------------------------------------------------------------


ADDRESSES = [
    ("get", BASE),
    ("post", BASE),
    ("delete", BASE),
    ("patch", f"{BASE}/1"),
    ("delete", f"{BASE}/1?version=1"),
    ("get", f"{BASE}/merges"),
    ("post", f"{BASE}/merges/1/revert"),
]


@pytest.mark.parametrize(("method", "url"), ADDRESSES)
def test_anonymous_requests_are_refused(method, url, user):
    LongTermMemory().create_notes(user, [{"categories": ["A"], "content": "Likes tea."}])

    response = getattr(APIClient(), method)(url, {}, format="json")

    # The example project lists session auth first, so DRF answers 403 (401 needs the first
    # authentication class to name a WWW-Authenticate challenge).
    assert_error(response, 403, "not_authenticated")
    assert MemoryNote.objects.count() == 1


@pytest.fixture
def host_basic_auth(monkeypatch):
    """A host that configures HTTP Basic next to sessions (the example project does not)."""
    monkeypatch.setattr(
        MemoryAPIView, "authentication_classes", [SessionAuthentication, BasicAuthentication]
    )


def test_wrong_basic_credentials_are_refused(user, host_basic_auth):
    client = APIClient()
    token = base64.b64encode(f"{user.username}:wrong".encode()).decode()
    client.credentials(HTTP_AUTHORIZATION=f"Basic {token}")

    assert_error(client.get(BASE), 403, "authentication_failed")


def test_basic_auth_configured_by_the_host_works(user, host_basic_auth):
    client = APIClient()
    token = base64.b64encode(f"{user.username}:pw-for-tests".encode()).decode()
    client.credentials(HTTP_AUTHORIZATION=f"Basic {token}")

    response = client.post(BASE, {"categories": ["A"], "content": "Likes tea."}, format="json")

    assert response.status_code == 201
    assert LongTermMemory().notes(user)[0].content == "Likes tea."


def person_from_header(request):
    """A RESOLVE_USER for the tests: the person named by the ``X-Person`` header."""
    from django.contrib.auth import get_user_model

    name = request.headers.get("X-Person")
    return get_user_model().objects.filter(username=name).first() if name else None


@override_settings(AGENT_MEMORY={"RESOLVE_USER": "tests.api.test_endpoints.person_from_header"})
def test_resolve_user_decides_who_the_person_is(user, other_user):
    client = APIClient()

    response = client.post(
        BASE,
        {"categories": ["A"], "content": "Likes tea."},
        format="json",
        headers={"X-Person": other_user.username},
    )

    assert response.status_code == 201
    assert [note.content for note in LongTermMemory().notes(other_user)] == ["Likes tea."]
    assert LongTermMemory().notes(user) == []
    assert_error(client.get(BASE), 403, "not_authenticated")


def test_csrf_is_enforced_for_session_authenticated_unsafe_requests(user):
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(user)
    body = {"categories": ["A"], "content": "Likes tea."}

    message = assert_error(client.post(BASE, body, format="json"), 403, "permission_denied")
    assert "CSRF" in message
    assert_error(client.delete(BASE), 403, "permission_denied")
    assert not MemoryNote.objects.exists()

    assert client.get(BASE).status_code == 200  # safe methods need no token
    token = "a" * 32
    client.cookies["csrftoken"] = token
    response = client.post(BASE, body, format="json", headers={"X-CSRFToken": token})
    assert response.status_code == 201


@override_settings(AGENT_MEMORY={"ENABLED": False})
@pytest.mark.parametrize(("method", "url"), [*ADDRESSES, ("put", f"{BASE}/1")])
@pytest.mark.parametrize("signed_in", [True, False])
def test_every_address_is_not_found_when_memory_is_switched_off(method, url, signed_in, user):
    LongTermMemory().create_notes(user, [{"categories": ["A"], "content": "Likes tea."}])
    client = APIClient()
    if signed_in:
        client.force_login(user)

    response = getattr(client, method)(url, {"categories": ["B"], "content": "x"}, format="json")

    assert_error(response, 404, "not_found")
    assert MemoryNote.objects.get().content == "Likes tea."


# --- the error body for DRF's own failures ----------------------------------------------------


def test_an_unsupported_method_answers_405_with_the_error_body(api):
    response = api.put(f"{BASE}/1", {}, format="json")

    assert_error(response, 405, "method_not_allowed")
    assert set(response["Allow"].replace(" ", "").split(",")) == {"PATCH", "DELETE", "OPTIONS"}


def test_a_body_that_is_not_json_answers_415_with_the_error_body(api):
    assert_error(
        api.post(BASE, "content=x", content_type="text/plain"), 415, "unsupported_media_type"
    )


class HeaderToken(BaseAuthentication):
    """A token-style authentication a host might configure: ``Authorization: Token <username>``."""

    def authenticate(self, request):
        scheme, _, value = request.headers.get("Authorization", "").partition(" ")
        if scheme != "Token":
            return None
        from django.contrib.auth import get_user_model

        person = get_user_model().objects.filter(username=value).first()
        if person is None:
            raise AuthenticationFailed("Unknown token.")
        return person, value

    def authenticate_header(self, request):
        return "Token"


def test_token_style_auth_of_the_host_works_without_csrf(user, monkeypatch):
    monkeypatch.setattr(MemoryAPIView, "authentication_classes", [HeaderToken])
    client = APIClient(enforce_csrf_checks=True)

    response = client.post(
        BASE,
        {"categories": ["A"], "content": "Likes tea."},
        format="json",
        headers={"Authorization": f"Token {user.username}"},
    )

    assert response.status_code == 201
    assert LongTermMemory().notes(user)[0].content == "Likes tea."


def test_anonymous_gets_401_with_a_challenge_when_the_host_s_auth_names_one(monkeypatch):
    monkeypatch.setattr(MemoryAPIView, "authentication_classes", [HeaderToken])

    response = APIClient().get(BASE)

    assert_error(response, 401, "not_authenticated")
    assert response["WWW-Authenticate"] == "Token"
    bad = APIClient().get(BASE, headers={"Authorization": "Token nobody"})
    assert_error(bad, 401, "authentication_failed")


def test_a_client_that_accepts_no_json_gets_406_in_json(api):
    assert_error(api.get(BASE, headers={"Accept": "text/html"}), 406, "not_acceptable")
