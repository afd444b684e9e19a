"""Connected apps: the person's MCP access tokens on the memory screen and in admin, and the
endpoint's answers in process (the live server and the SDK's client: test_mcp_live.py)."""

from __future__ import annotations

import hashlib
import json

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from agent_memory.mcp import tokens
from agent_memory.models import MemoryAccessToken

pytestmark = pytest.mark.django_db

SCREEN = "/memory/"
ENDPOINT = "/mcp/"


@pytest.fixture
def browser(user):
    client = Client(enforce_csrf_checks=False)
    client.force_login(user)
    return client


def test_a_new_token_is_shown_once_and_only_its_digest_is_kept(browser, user):
    page = browser.get(SCREEN).content.decode()
    assert "Connected apps" in page and "http://testserver/mcp/" in page

    made = browser.post("/memory/apps/new", {"name": "  Desktop assistant "})
    assert made.status_code == 200 and "no-store" in made["Cache-Control"]
    (token,) = MemoryAccessToken.objects.filter(user=user)
    secret = made.context["new_token"].secret
    assert secret.startswith(tokens.PREFIX) and secret in made.content.decode()
    assert token.name == "Desktop assistant"
    assert token.digest == hashlib.sha256(secret.encode()).hexdigest()
    assert secret not in json.dumps(list(MemoryAccessToken.objects.values()), default=str)

    again = browser.get(SCREEN).content.decode()
    assert "Desktop assistant" in again and "never used" in again and secret not in again
    assert tokens.authenticate(secret).user == user
    assert "last used" in browser.get(SCREEN).content.decode()


def test_a_token_name_is_required_and_short(browser, user):
    empty = browser.post("/memory/apps/new", {"name": "   "})
    assert empty.status_code == 400 and "Give the token a name" in empty.content.decode()
    long = browser.post("/memory/apps/new", {"name": "x" * 101})
    assert long.status_code == 400 and "shorten it to 100" in long.content.decode()
    assert not MemoryAccessToken.objects.exists()


def test_a_person_has_at_most_twenty_live_tokens(user):
    for number in range(tokens.MAX_TOKENS):
        tokens.create_token(user, f"app {number}")
    with pytest.raises(tokens.LimitReached, match="revoke one"):
        tokens.create_token(user, "one more")
    tokens.revoke_token(user, tokens.live_tokens(user)[0].id)
    tokens.create_token(user, "one more")


def test_revoking_ends_access_and_another_persons_token_is_out_of_reach(browser, user, other_user):
    mine = tokens.create_token(user, "Quillmark IDE")
    theirs = tokens.create_token(other_user, "Theirs")

    foreign = browser.post(f"/memory/apps/{theirs.token.id}/revoke", follow=True)
    assert "no access any more" in foreign.content.decode()
    assert tokens.authenticate(theirs.secret) is not None

    done = browser.post(f"/memory/apps/{mine.token.id}/revoke", follow=True)
    assert "Access revoked" in done.content.decode()
    assert tokens.authenticate(mine.secret) is None
    assert "Quillmark IDE" not in browser.get(SCREEN).content.decode()
    assert browser.get(f"/memory/apps/{mine.token.id}/revoke").status_code == 405


def test_the_section_is_absent_where_the_site_serves_no_mcp_endpoint(browser, settings):
    settings.ROOT_URLCONF = "tests.mcp.urls_without_mcp"
    page = browser.get(SCREEN).content.decode()
    assert "Connected apps" not in page


def rpc(method: str, params: dict | None = None) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}})


def post(token: str | None, body: str):
    headers = {"HTTP_ACCEPT": "application/json, text/event-stream"}
    if token is not None:
        headers["HTTP_AUTHORIZATION"] = f"Bearer {token}"
    # A browser's session cookie does not count: only the token does.
    return Client().post(ENDPOINT, body, content_type="application/json", **headers)


def test_the_endpoint_answers_401_in_the_bearer_error_shape(user):
    made = tokens.create_token(user, "App")
    for token in (None, "", "amt_wrong", made.secret + "x"):
        answer = post(token, rpc("tools/list"))
        assert answer.status_code == 401
        assert answer.json()["error"] == "invalid_token"
        assert answer["WWW-Authenticate"].startswith('Bearer error="invalid_token"')
    tokens.revoke_token(user, made.token.id)
    assert post(made.secret, rpc("tools/list")).status_code == 401


def test_the_endpoint_runs_the_tool_as_the_tokens_person(user, other_user):
    secret = tokens.create_token(user, "App").secret
    listed = post(secret, rpc("tools/list"))
    assert listed.status_code == 200
    (tool,) = listed.json()["result"]["tools"]
    assert tool["name"] == "manage_memory" and tool["inputSchema"]["type"] == "object"

    arguments = {"action": "create", "notes": [{"categories": ["Pets"], "content": "Has a cat"}]}
    called = post(secret, rpc("tools/call", {"name": "manage_memory", "arguments": arguments}))
    result = called.json()["result"]
    assert result["isError"] is False
    (note,) = result["structuredContent"]["notes"]
    assert note["content"] == "Has a cat"
    assert get_user_model().objects.get(pk=user.pk).memory_notes.count() == 1

    other = tokens.create_token(other_user, "Other").secret
    wrong = {"action": "delete", "id": note["id"], "version": note["version"]}
    refused = post(other, rpc("tools/call", {"name": "manage_memory", "arguments": wrong}))
    assert refused.json()["result"]["isError"] is True
    assert refused.json()["result"]["structuredContent"]["error"]["kind"] == "not_found"

    block = post(secret, rpc("resources/read", {"uri": "memory://block"})).json()
    assert "Has a cat" in block["result"]["contents"][0]["text"]
    unknown = post(secret, rpc("resources/read", {"uri": "memory://other"})).json()
    assert "memory://block" in unknown["error"]["message"]


def test_admin_lists_tokens_without_digests_and_revokes_them(user):
    made = tokens.create_token(user, "Desktop assistant")
    staff = get_user_model().objects.create_superuser("ops", "ops@example.com", "pw-for-tests")
    client = Client()
    client.force_login(staff)
    listing = client.get("/admin/agent_memory/memoryaccesstoken/").content.decode()
    assert "Desktop assistant" in listing and made.token.digest not in listing
    detail = client.get(f"/admin/agent_memory/memoryaccesstoken/{made.token.id}/change/")
    assert made.token.digest not in detail.content.decode()
    assert client.get("/admin/agent_memory/memoryaccesstoken/add/").status_code == 403
    client.post(
        "/admin/agent_memory/memoryaccesstoken/",
        {"action": "revoke", "_selected_action": [made.token.id]},
    )
    assert tokens.authenticate(made.secret) is None
