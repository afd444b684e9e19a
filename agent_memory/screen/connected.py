"""The memory screen's "Connected apps": the person's access tokens for MCP clients.

A new token is shown once, in the answer to the form that made it (never in a URL, a message
cookie or a log); afterwards the screen lists only each token's name, when it was made and when
it was last used. Revoking takes effect on the app's next request. The section appears only
where the site serves the MCP endpoint (``include("agent_memory.mcp.urls")``).
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.urls import NoReverseMatch, reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from ..errors import AgentMemoryError
from ..mcp import tokens
from .page import MemoryPage, done, notify, render_screen, screen_view


def mcp_endpoint(request: HttpRequest | None) -> str | None:
    """The MCP endpoint's absolute URL, or ``None`` where the site does not serve it."""
    try:
        path = reverse("agent_memory_mcp:endpoint")
    except NoReverseMatch:
        return None
    return request.build_absolute_uri(path) if request is not None else path


def section(request: HttpRequest | None, person: Any) -> dict[str, Any]:
    """What the section shows: the endpoint and the person's live tokens."""
    endpoint = mcp_endpoint(request)
    return {
        "endpoint": endpoint,
        "tokens": tokens.live_tokens(person) if endpoint is not None else [],
        "name_limit": tokens.MAX_NAME_CHARS,
    }


@screen_view
@require_POST
def create(request: HttpRequest, page: MemoryPage) -> HttpResponse:
    """Make a token and show it, this once, on the screen."""
    try:
        made = tokens.create_token(page.person, request.POST.get("name", ""))
    except AgentMemoryError as error:
        return render_screen(
            page,
            status=400,
            token_error=error.message,
            token_name=request.POST.get("name", "")[: tokens.MAX_NAME_CHARS],
        )
    # Never cached (screen_view): the page holds the token.
    return render_screen(page, new_token=made)


@screen_view
@require_POST
def revoke(request: HttpRequest, page: MemoryPage, token_id: int) -> HttpResponse:
    """Revoke one of the person's tokens (another person's looks like a missing one)."""
    if tokens.revoke_token(page.person, token_id):
        notify(
            request,
            messages.SUCCESS,
            _("Access revoked: that app can no longer reach your memory."),
        )
    else:
        notify(request, messages.WARNING, _("That app had no access any more."))
    return done(page)
