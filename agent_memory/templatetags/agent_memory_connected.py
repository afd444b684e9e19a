"""``{% load agent_memory_connected %}{% connected_apps as apps %}``: the memory screen's
"Connected apps" section (the MCP endpoint and the person's tokens), read for the page's person.
"""

from __future__ import annotations

from typing import Any

from django import template

from ..people import resolve_person
from ..screen.connected import section

register = template.Library()


@register.simple_tag(takes_context=True)
def connected_apps(context: Any) -> dict[str, Any]:
    request = context.get("request")
    person = resolve_person(request) if request is not None else None
    if person is None:
        return {"endpoint": None, "tokens": []}
    return section(request, person)
