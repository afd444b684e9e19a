"""The person's access tokens for MCP clients: made and revoked on the memory screen.

A token is shown once, when it is made; only its SHA-256 digest is stored
(:class:`~agent_memory.models.MemoryAccessToken`), so a database leak yields no usable token.
A request presenting a token acts as the token's person only, until the token is revoked.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext

from ..errors import InvalidNote, LimitReached
from ..models import MemoryAccessToken
from ..people import user_id_of

#: Every token starts with this, so a leaked one is easy to recognise (and to scan for).
PREFIX = "amt_"
#: The longest name a token may have (the model's field).
MAX_NAME_CHARS = 100
#: How many live (not revoked) tokens one person may hold.
MAX_TOKENS = 20
#: ``last_used_at`` is written at most this often per token (a busy client makes no write per
#: request).
USE_RESOLUTION = timedelta(minutes=1)


@dataclass(frozen=True)
class NewToken:
    """A token just made: ``secret`` is the token itself, shown to the person this once."""

    token: MemoryAccessToken
    secret: str


def digest_of(secret: str) -> str:
    """The SHA-256 hex digest stored for a token."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def live_tokens(user: Any) -> list[MemoryAccessToken]:
    """The person's tokens that still work, newest first."""
    return list(
        MemoryAccessToken.objects.filter(user_id=user_id_of(user), revoked_at=None).order_by(
            "-created_at", "-id"
        )
    )


def create_token(user: Any, name: Any) -> NewToken:
    """A new token for the person, named ``name`` (which app it is for).

    Raises :class:`~agent_memory.errors.InvalidNote` for an empty or too long name and
    :class:`~agent_memory.errors.LimitReached` past :data:`MAX_TOKENS` live tokens.
    """
    user_id = user_id_of(user)
    clean = name.strip() if isinstance(name, str) else ""
    if not clean:
        raise InvalidNote(
            gettext("Give the token a name, e.g. the app that will use it (“Desktop assistant”).")
        )
    if len(clean) > MAX_NAME_CHARS:
        raise InvalidNote(
            gettext("The name has {count} characters; shorten it to {limit} or fewer.").format(
                count=len(clean), limit=MAX_NAME_CHARS
            )
        )
    live = MemoryAccessToken.objects.filter(user_id=user_id, revoked_at=None).count()
    if live >= MAX_TOKENS:
        raise LimitReached(
            gettext(
                "You already have {count} connected apps, the most allowed; revoke one you no "
                "longer use first."
            ).format(count=live)
        )
    secret = PREFIX + secrets.token_urlsafe(32)
    token = MemoryAccessToken.objects.create(user_id=user_id, name=clean, digest=digest_of(secret))
    return NewToken(token, secret)


def revoke_token(user: Any, token_id: int) -> bool:
    """Revoke one of the person's tokens; ``False`` when it is not theirs or already revoked."""
    changed = MemoryAccessToken.objects.filter(
        id=token_id, user_id=user_id_of(user), revoked_at=None
    ).update(revoked_at=timezone.now())
    return changed == 1


def authenticate(secret: str | None) -> MemoryAccessToken | None:
    """The live token whose digest matches ``secret`` (its ``user`` loaded), else ``None``.

    Records when it was used (at most once per :data:`USE_RESOLUTION`).
    """
    if not secret or not secret.startswith(PREFIX) or len(secret) > 200:
        return None
    token = (
        MemoryAccessToken.objects.select_related("user")
        .filter(digest=digest_of(secret), revoked_at=None)
        .first()
    )
    if token is None or not getattr(token.user, "is_active", True):
        return None
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at >= USE_RESOLUTION:
        MemoryAccessToken.objects.filter(id=token.id).filter(
            Q(last_used_at=None) | Q(last_used_at__lt=now - USE_RESOLUTION)
        ).update(last_used_at=now)
        token.last_used_at = now
    return token
