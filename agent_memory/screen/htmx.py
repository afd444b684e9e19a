"""What the screen needs of htmx, in the shape of ``django-htmx``: whether a request came from
htmx, whether it asks for a fragment, and the two response headers that retarget a swap.

The screen sets no other htmx header; a site does not need ``django-htmx`` installed for it.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse


def is_htmx(request: HttpRequest) -> bool:
    """Whether htmx sent the request (``HX-Request``), boosted or not."""
    return request.headers.get("HX-Request") == "true"


def wants_fragment(request: HttpRequest) -> bool:
    """An htmx request for a piece of the page (a boosted one wants the whole page)."""
    return is_htmx(request) and request.headers.get("HX-Boosted") != "true"


def retarget(response: HttpResponse, target: str) -> HttpResponse:
    """Swap the answer into ``target`` (a CSS selector) instead of the element that asked."""
    response["HX-Retarget"] = target
    return response


def reswap(response: HttpResponse, style: str) -> HttpResponse:
    """Swap the answer with ``style`` (``"outerHTML"``, ``"innerHTML"``…)."""
    response["HX-Reswap"] = style
    return response
