"""Characters a note never holds, and text that shows nothing.

Controls, lone surrogates and text-direction controls are refused with their position;
text made only of zero-width, blank or combining characters is refused as invisible.
"""

from __future__ import annotations

import re
import unicodedata

from django.utils.translation import gettext

#: Characters that change the direction of the text around them (overrides, embeddings,
#: isolates, marks): shown as they are, they make a note read differently from what it holds.
BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)


#: Letters and symbols that draw nothing (Hangul fillers, the blank Braille pattern, the
#: Mongolian vowel separator), though their categories say otherwise.
BLANK_CHARACTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800\u180e")
#: Categories that never draw on their own: separators, format characters (zero-width space,
#: joiners, the byte-order mark, soft hyphen), controls, and marks (which only change the
#: character before them).
_INVISIBLE_CATEGORIES = frozenset({"Zs", "Zl", "Zp", "Cf", "Cc", "Cs", "Mn", "Me"})


def has_visible_character(text: str) -> bool:
    """Whether ``text`` has at least one character that shows (not only zero-width, blank or
    combining ones)."""
    return any(
        not char.isspace()
        and char not in BLANK_CHARACTERS
        and unicodedata.category(char) not in _INVISIBLE_CATEGORIES
        for char in text
    )


#: Controls (Cc), lone surrogates (Cs) and direction controls: one regular expression finds the
#: first, so a long text is not walked character by character in Python.
_UNSTORABLE_RE = re.compile(
    "[\x00-\x1f\x7f-\x9f\ud800-\udfff" + "".join(sorted(BIDI_CONTROLS)) + "]"
)


def unstorable_character(text: str, allowed: str, offset: int = 0) -> str | None:
    """Describe the first control character, lone surrogate or text-direction control in
    ``text`` (not in ``allowed``), with its position (1-based, counted from ``offset``).

    Such characters are never meant as note text, PostgreSQL cannot store NUL at all, and
    direction controls can make a note display differently from what it says.
    """
    for found in _UNSTORABLE_RE.finditer(text):
        char, index = found.group(), offset + found.start() + 1
        if char in allowed:
            continue
        code = f"U+{ord(char):04X}"
        if char in BIDI_CONTROLS:
            return gettext(
                "the invisible text-direction character %(code)s (%(name)s) at position "
                "%(position)s"
            ) % {"code": code, "name": unicodedata.name(char), "position": index}
        if unicodedata.category(char) in ("Cc", "Cs"):
            return gettext("the unprintable character %(code)s at position %(position)s") % {
                "code": code,
                "position": index,
            }
    return None


def leading_space(value: str) -> int:
    """How many characters of white space ``value`` starts with (positions count from them)."""
    return len(value) - len(value.lstrip())


def excerpt(text: str, size: int = 40) -> str:
    """``text`` cut to ``size`` characters with "…", as messages quote it."""
    return text if len(text) <= size else text[: size - 1] + "…"


__all__ = [
    "BIDI_CONTROLS",
    "BLANK_CHARACTERS",
    "excerpt",
    "has_visible_character",
    "leading_space",
    "unstorable_character",
]
