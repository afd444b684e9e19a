"""The memory screen's forms: a note (categories and text, checked by the note rules) and an
import."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from ..errors import ErrorCode
from ..forms import CategoriesField, ContentField, ValidUntilField, join_categories
from ..transfer import MAX_IMPORT_BYTES


class NoteForm(forms.Form):
    """Add or edit one note. The fields are checked by :mod:`agent_memory.rules`, the same
    functions the tool, the API and the admin use; limits and duplicates are checked when the
    note is written, under the person's lock."""

    categories = CategoriesField(label=_("Categories"), required=False)
    content = ContentField(
        label=_("What to remember"),
        # No ``maxlength``: the browser would cut pasted text silently. A live counter shows the
        # length, and the server says how much to cut.
        widget=forms.Textarea(attrs={"rows": 3}),
        required=False,
    )
    version = forms.IntegerField(widget=forms.HiddenInput, required=False, min_value=1)
    valid_until = ValidUntilField(
        label=_("Valid until"), help_text=_("Optional: the last day this note holds.")
    )

    def __init__(self, *args: Any, note: Any = None, id_prefix: str = "", **kwargs: Any) -> None:
        prefix = id_prefix or (f"note-{note.id}" if note is not None else "new-note")
        kwargs.setdefault("auto_id", f"{prefix}-%s")
        if note is not None and "initial" not in kwargs:
            kwargs["initial"] = {
                "categories": join_categories(note.categories),
                "content": note.content,
                "version": note.version,
                "valid_until": (
                    None if note.valid_until is None else timezone.localdate(note.valid_until)
                ),
            }
        super().__init__(*args, **kwargs)
        self.note = note
        help_id = f"{prefix}-categories-help"
        self.fields["categories"].widget.attrs.update(
            {"aria-describedby": help_id, "autocomplete": "off"}
        )
        self.categories_help_id = help_id

    #: The fields in the order the editor shows them.
    SHOWN_FIELDS = ("content", "categories", "valid_until")

    @property
    def focus_field(self) -> str:
        """The field the editor focuses as it opens: after a refusal the first shown with an
        error (the text when only the form as a whole has one), the text of a note opened to be
        edited, none in an untouched "Add a note"."""
        if self.is_bound and self.errors:
            return next((name for name in self.SHOWN_FIELDS if name in self.errors), "content")
        return "content" if self.note is not None else ""

    def valid_until_change(self) -> dict[str, Any]:
        """``{"valid_until": …}`` if the person changed the date (an untouched one keeps the
        note's own end, which may be a time of day), else ``{}``."""
        if self.note is not None and "valid_until" not in self.changed_data:
            return {}
        return {"valid_until": self.cleaned_data.get("valid_until")}


class ImportForm(forms.Form):
    """A file to import: a download from this screen (JSON), or text with one note per line."""

    #: Larger files are refused before they are read (a memory holds at most a few hundred
    #: short notes; a download of a full one is well under this).
    MAX_BYTES = MAX_IMPORT_BYTES

    file = forms.FileField(
        label=_("File"),
        help_text=_("A file from “Download my memory”, or a text file with one note per line."),
    )
    categories = CategoriesField(
        label=_("Categories for a text file"),
        required=False,
        allow_none=True,
        help_text=_("1 to 3, separated by commas; used for every line. Default: “Imported”."),
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("auto_id", "import-%s")
        super().__init__(*args, **kwargs)

    def clean_file(self) -> str:
        upload = self.cleaned_data["file"]
        if upload.size > self.MAX_BYTES:
            raise forms.ValidationError(
                _(
                    "The file is larger than 1 MB. A memory download is much smaller: check it "
                    "is the right file."
                ),
                code=ErrorCode.IMPORT_TOO_LARGE,
            )
        try:
            return str(upload.read().decode("utf-8-sig"))
        except UnicodeDecodeError:
            raise forms.ValidationError(
                _(
                    "The file is not plain text. Choose a file made by “Download my memory”, or "
                    "save your notes as a UTF-8 text file."
                ),
                code=ErrorCode.IMPORT_UNREADABLE,
            ) from None
