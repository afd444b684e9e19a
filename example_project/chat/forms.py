from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _


class MessageForm(forms.Form):
    text = forms.CharField(
        label=_("Message"),
        max_length=4000,
        strip=True,
        widget=forms.Textarea(
            attrs={
                "rows": 3,
                "placeholder": _("Write a message… e.g. “remember that I prefer tea”"),
                "autofocus": True,
            }
        ),
    )


class CompactForm(forms.Form):
    keep = forms.TypedChoiceField(
        label=_("Keep"),
        coerce=int,
        initial=1,
        choices=[(1, _("the last turn")), (0, _("nothing"))],
    )


class GroupForm(forms.Form):
    is_group = forms.BooleanField(label=_("Group chat"), required=False)
