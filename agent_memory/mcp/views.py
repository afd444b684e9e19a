"""The Streamable HTTP endpoint, served by the Django site (WSGI or ASGI).

Each request is checked for a live access token (``Authorization: Bearer amt_…``) first; a
missing, wrong or revoked one is answered ``401`` with the MCP authorization spec's shape (an
OAuth 2.0 bearer-token error: ``WWW-Authenticate: Bearer error="invalid_token", …`` and
``{"error": "invalid_token", "error_description": …}``). Then the SDK's own Streamable HTTP
transport answers the request, stateless and with JSON responses (no session to keep between
requests, so any worker process may answer any request), on a server bound to the token's
person (:func:`~agent_memory.mcp.server.build_server`).

Django runs this async view in an event loop of its own under WSGI; the memory operations run
back in the request's thread. The view is exempt from CSRF checks because it accepts no
cookie: only the ``Authorization`` header, which a browser never sends by itself.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

from asgiref.sync import sync_to_async
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from ..conf import memory_settings
from ..site import get_memory
from . import tokens
from .server import build_server


def unauthorized(description: str) -> HttpResponse:
    """The 401 of the MCP authorization spec (RFC 6750's bearer-token error)."""
    response = JsonResponse(
        {"error": "invalid_token", "error_description": description}, status=401
    )
    response["WWW-Authenticate"] = (
        f'Bearer error="invalid_token", error_description="{description}"'
    )
    return response


def bearer_token(request: HttpRequest) -> str | None:
    scheme, _, value = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        return None
    return value.strip()


def asgi_scope(request: HttpRequest) -> dict[str, Any]:
    """The ASGI ``http`` scope of a Django request, for the SDK's transport."""
    headers = [
        (name.lower().encode("latin-1"), value.encode("latin-1"))
        for name, value in request.headers.items()
    ]
    host = request.get_host()
    name, _, port = host.rpartition(":") if ":" in host else (host, "", "")
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": request.method or "GET",
        "scheme": request.scheme or "http",
        "path": request.path,
        "raw_path": request.path.encode("utf-8"),
        "root_path": "",
        "query_string": request.META.get("QUERY_STRING", "").encode("latin-1"),
        "headers": headers,
        "server": (name or host, int(port) if port.isdigit() else 80),
        "client": (request.META.get("REMOTE_ADDR", ""), 0),
    }


async def serve(request: HttpRequest, user: Any, origin: str) -> HttpResponse:
    """Answer one Streamable HTTP request with a fresh stateless server for ``user``."""
    body = request.body
    sent_body = False
    status = 500
    response_headers: list[tuple[str, str]] = []
    chunks: list[bytes] = []

    async def receive() -> dict[str, Any]:
        nonlocal sent_body
        if not sent_body:
            sent_body = True
            return {"type": "http.request", "body": body, "more_body": False}
        return {"type": "http.disconnect"}

    async def send(message: MutableMapping[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = int(message["status"])
            response_headers.extend(
                (key.decode("latin-1"), value.decode("latin-1"))
                for key, value in message.get("headers", [])
            )
        elif message["type"] == "http.response.body":
            chunks.append(bytes(message.get("body", b"")))

    memory = await sync_to_async(get_memory)()
    manager = StreamableHTTPSessionManager(
        app=build_server(memory, user, origin), json_response=True, stateless=True
    )
    async with manager.run():
        await manager.handle_request(asgi_scope(request), receive, send)
    response = HttpResponse(b"".join(chunks), status=status)
    for key, value in response_headers:
        if key.lower() not in ("content-length", "transfer-encoding", "connection"):
            response[key] = value
    return response


@csrf_exempt
@never_cache
async def endpoint(request: HttpRequest) -> HttpResponse:
    """``/mcp/``: the Streamable HTTP transport of the token's person's memory."""
    if not memory_settings.ENABLED:
        return JsonResponse(
            {"error": "not_found", "error_description": "Memory is off."}, status=404
        )
    secret = bearer_token(request)
    if secret is None:
        return unauthorized(
            "Authentication required: send Authorization: Bearer <token>; people make tokens "
            "under Connected apps on their memory screen."
        )
    token = await sync_to_async(tokens.authenticate)(secret)
    if token is None:
        return unauthorized(
            "The token is unknown or revoked; make a new one under Connected apps on the "
            "memory screen."
        )
    return await serve(request, token.user, f"mcp:{token.pk}")
