"""The person a management command's ``--user`` names."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import CommandError


def person_named(value: str) -> Any | None:
    """The user whose username is ``value``, else whose primary key it spells, whatever the
    key's type (an integer, a UUID, a text); ``None`` if there is neither."""
    model = get_user_model()
    people = model._default_manager
    found = people.filter(**{model.USERNAME_FIELD: value}).first()
    if found is not None:
        return found
    try:
        key = model._meta.pk.to_python(value)
    except ValidationError:  # not the spelling of a key of this type
        return None
    return people.filter(pk=key).first()


def person_key(value: str) -> Any:
    """The primary key of the person ``--user value`` names; ``CommandError`` if nobody."""
    found = person_named(value)
    if found is None:
        raise CommandError(f"No person {value!r} (give a primary key or a username).")
    return found.pk
