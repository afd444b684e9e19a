"""Whose memory it is: a user (or its primary key) to the person's key, and a request to the
person it acts for.

The front door, the optimizer, the HTTP API and the memory screen all resolve people here, so
"who is this" has one answer everywhere.
"""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext

from .conf import import_setting, memory_settings
from .errors import InvalidNote


def user_id_of(user: Any) -> Any:
    """The primary key of ``user``, given a user instance or the key itself."""
    if user is None or isinstance(user, bool):
        raise InvalidNote(gettext("No person given: pass a user instance or its primary key."))
    if getattr(user, "is_anonymous", False) is True:
        raise InvalidNote(
            gettext("The person is not signed in: memory belongs to a signed-in user.")
        )
    if hasattr(user, "_meta") and hasattr(user, "pk"):
        if user.pk is None or (user._state.adding and not _stored(user)):
            raise InvalidNote(gettext("The user is not saved yet: save it before using memory."))
        return user.pk
    return user


def _stored(user: Any) -> bool:
    """Whether a user instance never loaded nor saved (``_state.adding``) is stored all the
    same: one made with the key of a stored user, or one whose key its field made up as it was
    built (a UUID's ``default=uuid4``) and never saved."""
    return bool(type(user)._default_manager.filter(pk=user.pk).exists())


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
        resolver = import_setting("RESOLVE_USER", resolver)
    return resolver(request)


__all__ = ["authenticated_user", "resolve_person", "user_id_of"]
