"""Why the optimizer rejected a group or a run failed, as stored and as ops read it.

Run records keep reasons in English (a run is recorded by a worker, in no one's language); each
reason is one of the texts below with its details filled in. :func:`translate_reason` reads a
stored reason back in the active language, so the admin speaks the admin user's language. A
text that is not one of these (an old record, a custom store's own) is shown as it was stored.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from django.utils.translation import gettext, gettext_noop

from ..stores.policy import LEASE_EXPIRED as LEASE_EXPIRED

OVERLAP = gettext_noop("%(ids)s is proposed in more than one group.")
SHAPE = gettext_noop('The group is not {"ids": [note ids], "categories": [...], "content": "..."}.')
TOO_FEW = gettext_noop("A merge needs at least 2 distinct notes.")
UNKNOWN_NOTE = gettext_noop("%(ids)s: not a current note of this person.")
INVENTED_CATEGORIES = gettext_noop("Categories not taken from the sources: %(names)s.")
LOST_DETAIL = gettext_noop("The merged text loses: %(details)s.")
DUPLICATE = gettext_noop("The merged text duplicates %(key)s, which is outside the group.")
SOURCES_DISAGREE = gettext_noop(
    "The sources disagree: one denies what another affirms, so they must stay separate notes."
)
DROPS_NEGATION = gettext_noop("The merged text drops a negation that a source has.")
ADDS_NEGATION = gettext_noop("The merged text adds a negation that no source has.")
DENIES_AFFIRMED = gettext_noop("The merged text denies something a source affirms.")
CHANGED = gettext_noop("A source changed while the model was thinking.")
PINNED = gettext_noop("%(ids)s: pinned by the person, never merged.")
KEPT_APART = gettext_noop("The person reverted an earlier merge of %(keys)s: they stay apart.")
ALL_REJECTED = gettext_noop("Every proposed group was rejected.")
MODEL_CALL_FAILED = gettext_noop("The model call failed: %(error)s")

REASONS = (
    OVERLAP,
    SHAPE,
    TOO_FEW,
    UNKNOWN_NOTE,
    INVENTED_CATEGORIES,
    LOST_DETAIL,
    DUPLICATE,
    SOURCES_DISAGREE,
    DROPS_NEGATION,
    ADDS_NEGATION,
    DENIES_AFFIRMED,
    CHANGED,
    PINNED,
    KEPT_APART,
    ALL_REJECTED,
    MODEL_CALL_FAILED,
    LEASE_EXPIRED,
)

_PLACEHOLDER = re.compile(r"%\((\w+)\)s")


def reason(template: str, **details: Any) -> str:
    """A reason to store: ``template`` (one of the texts above) in English with its details."""
    return template % details if details else template


@cache
def _pattern(template: str) -> re.Pattern[str]:
    parts = _PLACEHOLDER.split(template)
    regex = "".join(
        f"(?P<{part}>.+?)" if index % 2 else re.escape(part) for index, part in enumerate(parts)
    )
    return re.compile(regex, re.S)


def translate_reason(text: str) -> str:
    """A stored reason in the active language (unchanged when it is not a known text)."""
    for template in REASONS:
        match = _pattern(template).fullmatch(text)
        if match is not None:
            details = match.groupdict()
            translated = gettext(template)
            return translated % details if details else translated
    return gettext(text) if text else text
