"""Form fields for a note, shared by the memory screen and admin.

Each field cleans its value through :mod:`agent_memory.rules`, the functions the tool and the
API use, and words a broken rule for a person (:func:`~agent_memory.wording.person_message`);
limits and duplicates are checked when the note is written, under the person's lock.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from . import rules
from .errors import InvalidNote
from .wording import person_message

CATEGORIES_HELP = _("1 to 3, separated by commas, e.g. “Preferences, Language”.")


def split_categories(text: str) -> list[str]:
    """``"Preferences, Language"`` → ``["Preferences", "Language"]`` (empty pieces dropped)."""
    return [name.strip() for name in text.split(",") if name.strip()]


def join_categories(categories: Any) -> str:
    """``["Preferences", "Language"]`` → ``"Preferences, Language"``."""
    return ", ".join(categories)


def _by_the_rules(rule: Callable[[Any], Any], value: Any) -> Any:
    try:
        return rule(value)
    except InvalidNote as error:
        raise forms.ValidationError(person_message(error), code=error.code) from None


class CategoriesField(forms.CharField):
    """A note's categories typed as ``"Preferences, Language"``; cleaned into a list by
    :func:`~agent_memory.rules.clean_categories`. With ``allow_none`` an empty field is ``[]``
    (the default categories apply)."""

    def __init__(self, *, allow_none: bool = False, **kwargs: Any) -> None:
        kwargs.setdefault("help_text", CATEGORIES_HELP)
        super().__init__(**kwargs)
        self.allow_none = allow_none

    def prepare_value(self, value: Any) -> Any:
        return join_categories(value) if isinstance(value, (list, tuple)) else value

    def has_changed(self, initial: Any, data: Any) -> bool:
        return super().has_changed(self.prepare_value(initial), data)

    def clean(self, value: Any) -> list[str]:
        names = split_categories(super().clean(value) or "")
        if not names and self.allow_none:
            return []
        return list(_by_the_rules(rules.clean_categories, names))


class ContentField(forms.CharField):
    """A note's text, cleaned by :func:`~agent_memory.rules.clean_content` (length, secrets,
    invisible controls)."""

    def clean(self, value: Any) -> str:
        return str(_by_the_rules(rules.clean_content, super().clean(value)))


class ValidUntilField(forms.DateField):
    """The last day a note holds (empty: no end), as a date picker; checked by
    :func:`~agent_memory.rules.clean_valid_until` (not past, at most 10 years ahead). The note
    then holds through the end of that day in the site's time zone."""

    widget = forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d")

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("required", False)
        kwargs.setdefault("label", _("valid until"))
        kwargs.setdefault("help_text", _("Optional: the last day this note holds."))
        super().__init__(**kwargs)

    def clean(self, value: Any) -> Any:
        day = super().clean(value)
        if day is None:
            return None
        return _by_the_rules(rules.clean_valid_until, day)


__all__ = [
    "CategoriesField",
    "ContentField",
    "ValidUntilField",
    "join_categories",
    "split_categories",
]
