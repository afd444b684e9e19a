"""Who the person behind a request is (``AGENT_MEMORY["RESOLVE_USER"]``)."""

from __future__ import annotations

from typing import Any

from django.utils.module_loading import import_string
from django.utils.translation import gettext_lazy as _
from rest_framework.permissions import BasePermission

from ..conf import memory_settings


def authenticated_user(request: Any) -> Any:
    """The default resolver: the authenticated ``request.user``, else ``None``."""
    user = getattr(request, "user", None)
    if user is None or not getattr(user, "is_authenticated", False):
        return None
    return user


def resolve_person(request: Any) -> Any:
    """The person whose memory the request reads and changes, or ``None`` (refused).

    ``RESOLVE_USER`` is a dotted path to ``callable(request) -> user | None`` (or the callable
    itself); unset, the person is the authenticated ``request.user``.
    """
    resolver = memory_settings.RESOLVE_USER
    if resolver is None:
        return authenticated_user(request)
    if isinstance(resolver, str):
        resolver = import_string(resolver)
    return resolver(request)


class HasMemoryPerson(BasePermission):
    """Lets the request in when it resolves to a person; DRF answers 401/403 otherwise."""

    message = _("Sign in to see and change your memory.")

    def has_permission(self, request: Any, view: Any) -> bool:
        # The memory views resolve the person once per request and keep it.
        get_person = getattr(view, "get_person", None)
        person = get_person() if callable(get_person) else resolve_person(request)
        return person is not None
