"""The MCP server with the official SDK's client: over Streamable HTTP against a real server
(gunicorn serving the example project's URLs), and over stdio through ``manage.py memory_mcp``.

One script runs through both: list the tools, create, search, update and delete a note as one
person, and read the memory block. Over HTTP each person's token acts as that person only, and a
revoked, wrong or missing token gets the 401 of the MCP authorization spec.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import httpx2
import pytest
from django.db import connection
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

from agent_memory.mcp import tokens
from agent_memory.models import MemoryNote
from tests import processes

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.servers]

ROOT = Path(__file__).resolve().parent.parent.parent
CONTENT = "Keeps bees on the roof of the garage"


def child_environment() -> dict[str, str]:
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.server_settings",
        "AGENT_MEMORY_TEST_DB": connection.settings_dict["NAME"],
        "AGENT_MEMORY_SERVER_SETTINGS": json.dumps({"OPTIMIZER": False}),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }


@pytest.fixture
def server(tmp_path):
    """gunicorn on a free loopback port, on the test database; yields the endpoint's URL."""
    with processes.gunicorn(child_environment(), tmp_path / "server.log", refuses) as port:
        yield f"http://127.0.0.1:{port}/mcp/"


def refuses(port: int) -> bool:
    """Whether the endpoint is up: it answers a request without a token with a 401."""
    return raw_post(f"http://127.0.0.1:{port}/mcp/", None)[0] == 401


def raw_post(url: str, token: str | None) -> tuple[int, dict[str, str], dict[str, Any]]:
    """A bare JSON-RPC ``tools/list`` POST, to see the HTTP answer itself."""
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode()
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, dict(answer.headers), json.loads(answer.read() or b"{}")
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), json.loads(error.read() or b"{}")


def http_client(url: str, token: str, statuses: list[int] | None = None) -> Client:
    """The SDK's client over Streamable HTTP with the token (``statuses``: the HTTP statuses)."""
    http = create_mcp_http_client({"Authorization": f"Bearer {token}"})
    if statuses is not None:

        async def record(response: httpx2.Response) -> None:
            statuses.append(response.status_code)

        http.event_hooks["response"].append(record)
    return Client(streamable_http_client(url, http_client=http))


def answer_of(result: Any) -> dict[str, Any]:
    """The tool's answer: the structured content, which is also the JSON text."""
    assert json.loads(result.content[0].text) == result.structured_content
    return result.structured_content


async def script(client: Client) -> dict[str, Any]:
    """Everything one person does through an MCP client; returns what it saw."""
    seen: dict[str, Any] = {}
    async with client:
        listed = await client.list_tools()
        seen["tools"] = {tool.name: tool for tool in listed.tools}
        created = answer_of(
            await client.call_tool(
                "manage_memory",
                {"action": "create", "notes": [{"categories": ["Hobbies"], "content": CONTENT}]},
            )
        )
        (note,) = created["notes"]
        seen["created"] = note
        seen["duplicate"] = answer_of(
            await client.call_tool(
                "manage_memory",
                {"action": "create", "notes": [{"categories": ["Hobbies"], "content": CONTENT}]},
            )
        )
        seen["found"] = answer_of(
            await client.call_tool("manage_memory", {"action": "search", "query": "bees"})
        )
        seen["block"] = (await client.read_resource("memory://block")).contents[0].text
        seen["updated"] = answer_of(
            await client.call_tool(
                "manage_memory",
                {
                    "action": "update",
                    "id": f"memory:{note['id']}",
                    "version": note["version"],
                    "categories": ["Hobbies"],
                    "content": "Keeps bees in the garden",
                },
            )
        )
        seen["stale"] = answer_of(
            await client.call_tool(
                "manage_memory",
                {"action": "delete", "id": note["id"], "version": note["version"]},
            )
        )
        seen["deleted"] = answer_of(
            await client.call_tool(
                "manage_memory",
                {
                    "action": "delete",
                    "id": note["id"],
                    "version": seen["updated"]["note"]["version"],
                },
            )
        )
        seen["malformed"] = answer_of(await client.call_tool("manage_memory", {"action": "x"}))
    return seen


def check_script(seen: dict[str, Any], person: Any) -> None:
    tool = seen["tools"]["manage_memory"]
    assert set(seen["tools"]) == {"manage_memory"}
    assert tool.input_schema["type"] == "object" and "action" in tool.input_schema["properties"]
    note = seen["created"]
    assert note["content"] == CONTENT and note["categories"] == ["Hobbies"]
    assert seen["duplicate"]["error"]["kind"] == "duplicate"
    assert f"memory:{note['id']}" in seen["duplicate"]["error"]["message"]
    assert [found["id"] for found in seen["found"]["notes"]] == [note["id"]]
    assert CONTENT in seen["block"] and seen["block"].startswith("<agent_memory")
    assert seen["updated"]["note"]["content"] == "Keeps bees in the garden"
    assert seen["stale"]["error"]["kind"] == "stale_version"
    assert seen["deleted"] == {"deleted": note["id"]}
    assert seen["malformed"]["error"]["kind"] == "invalid"
    assert not MemoryNote.objects.filter(user=person).exists()


def test_mcp_over_streamable_http_acts_as_the_tokens_person_only(server, make_user):
    alice, bob = make_user(), make_user()
    alice_token = tokens.create_token(alice, "Desktop assistant").secret
    bob_token = tokens.create_token(bob, "IDE").secret

    check_script(asyncio.run(script(http_client(server, alice_token))), alice)
    assert tokens.live_tokens(alice)[0].last_used_at is not None

    # Alice's note, and Bob's token: he neither finds it nor reaches it by id.
    kept = asyncio.run(
        one_call(
            server,
            alice_token,
            {"action": "create", "notes": [{"categories": ["Hobbies"], "content": CONTENT}]},
        )
    )["notes"][0]
    bob_search = asyncio.run(one_call(server, bob_token, {"action": "search", "query": "bees"}))
    assert bob_search == {"notes": [], "total": 0}
    bob_delete = asyncio.run(
        one_call(server, bob_token, {"action": "delete", "id": kept["id"], "version": 1})
    )
    assert bob_delete["error"]["kind"] == "not_found"
    assert MemoryNote.objects.filter(user=alice).count() == 1

    # A revoked token, a wrong one and none at all: 401 in the bearer-token error's shape.
    assert tokens.revoke_token(alice, tokens.live_tokens(alice)[0].id)
    for token in (alice_token, bob_token[:-2] + "xx", None):
        status, headers, body = raw_post(server, token)
        assert status == 401
        assert body["error"] == "invalid_token" and body["error_description"]
        assert headers["WWW-Authenticate"].startswith('Bearer error="invalid_token"')
    # The SDK's client is refused too: it saw the 401 and raised.
    statuses: list[int] = []
    with pytest.raises(BaseExceptionGroup) as refused:
        asyncio.run(one_call(server, alice_token, {"action": "search", "query": "bees"}, statuses))
    assert refused.group_contains(MCPError) and statuses and set(statuses) == {401}
    assert raw_post(server, bob_token)[0] == 200


async def one_call(
    url: str, token: str, arguments: dict[str, Any], statuses: list[int] | None = None
) -> dict[str, Any]:
    async with http_client(url, token, statuses) as client:
        return answer_of(await client.call_tool("manage_memory", arguments))


def test_mcp_over_stdio_runs_the_same_script(make_user):
    alice = make_user()
    command = StdioServerParameters(
        command=sys.executable,
        args=[str(ROOT / "manage.py"), "memory_mcp", "--user", alice.username],
        env=child_environment(),
        cwd=str(ROOT),
    )
    check_script(asyncio.run(script(Client(command))), alice)
