"""The memory screen's form: a note's categories and text, checked by the note rules."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from .. import rules
from ..errors import InvalidNote


def split_categories(text: str) -> list[str]:
    """``"Preferences, Language"`` → ``["Preferences", "Language"]`` (empty pieces dropped)."""
    return [name.strip() for name in text.split(",") if name.strip()]


def join_categories(categories: Any) -> str:
    return ", ".join(categories)


class NoteFieldsMixin:
    """``clean_categories`` and ``clean_content`` through :mod:`agent_memory.rules`, for any form
    with those two fields (the screen's and the admin's), so a rule's message shows on its field."""

    cleaned_data: dict[str, Any]

    def clean_categories(self) -> list[str]:
        try:
            return list(rules.clean_categories(split_categories(self.cleaned_data["categories"])))
        except InvalidNote as error:
            raise forms.ValidationError(error.message) from None

    def clean_content(self) -> str:
        try:
            return rules.clean_content(self.cleaned_data["content"])
        except InvalidNote as error:
            raise forms.ValidationError(error.message) from None


class NoteForm(NoteFieldsMixin, forms.Form):
    """Add or edit one note. The fields are checked by :mod:`agent_memory.rules`, the same
    functions the tool, the API and the admin use; limits and duplicates are checked when the
    note is written, under the person's lock."""

    categories = forms.CharField(
        label=_("Categories"),
        help_text=_("1 to 3, separated by commas, e.g. “Preferences, Language”."),
    )
    content = forms.CharField(
        label=_("What to remember"),
        widget=forms.Textarea(attrs={"rows": 3, "maxlength": rules.MAX_CONTENT_CHARS}),
    )
    version = forms.IntegerField(widget=forms.HiddenInput, required=False, min_value=1)

    def __init__(self, *args: Any, note: Any = None, **kwargs: Any) -> None:
        prefix = f"note-{note.id}" if note is not None else "new-note"
        kwargs.setdefault("auto_id", f"{prefix}-%s")
        if note is not None and "initial" not in kwargs:
            kwargs["initial"] = {
                "categories": join_categories(note.categories),
                "content": note.content,
                "version": note.version,
            }
        super().__init__(*args, **kwargs)
        self.note = note
        help_id = f"{prefix}-categories-help"
        self.fields["categories"].widget.attrs.update(
            {"aria-describedby": help_id, "autocomplete": "off"}
        )
        self.categories_help_id = help_id
