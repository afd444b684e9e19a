"""The API's permission: the request must resolve to a person (:mod:`agent_memory.people`)."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_lazy as _
from rest_framework.permissions import BasePermission

from ..people import resolve_person


class HasMemoryPerson(BasePermission):
    """Lets the request in when it resolves to a person; DRF answers 401/403 otherwise."""

    message = _("Sign in to see and change your memory.")

    def has_permission(self, request: Any, view: Any) -> bool:
        # The memory views resolve the person once per request and keep it.
        get_person = getattr(view, "get_person", None)
        person = get_person() if callable(get_person) else resolve_person(request)
        return person is not None
