"""Normalisation: the forms a text is scanned in.

NFKC, format characters (zero-width, bidi) removed and look-alike Cyrillic and Greek letters
folded to Latin, so ``sk‑proj`` spelled with a Cyrillic ``ѕ`` or a key with a zero-width space
inside is still a key. :mod:`agent_memory.prompt` folds text the same way.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

#: Characters that look like a Latin letter: Cyrillic and Greek, upper and lower case apart.
_LOOK_ALIKES = str.maketrans(
    # Cyrillic capitals, Cyrillic small letters, Greek capitals, Greek small letters.
    "\u0410\u0412\u0415\u041a\u041c\u041d\u041e\u0420\u0421\u0422\u0423\u0425\u0406\u0408\u0405\u051a\u051c\u04ba\u04c0"
    "\u0430\u0435\u0456\u0458\u043a\u043e\u0440\u0441\u0443\u0445\u0455\u04bb\u0501\u051b\u051d\u04cf"
    "\u0391\u0392\u0395\u0396\u0397\u0399\u039a\u039c\u039d\u039f\u03a1\u03a4\u03a5\u03a7"
    "\u03b1\u03b9\u03ba\u03bd\u03bf\u03c1\u03c5\u03c7",
    "ABEKMHOPCTYXIJSQWHIaeijkopcyxshdqwlABEZHIKMNOPTYXaikvopux",
)


def fold(text: str) -> str:
    """Look-alike Cyrillic and Greek letters replaced by the Latin ones they imitate."""
    return text.translate(_LOOK_ALIKES)


def visible(text: str) -> str:
    """``text`` in NFKC with every format character (zero-width, bidi, soft hyphen) removed."""
    text = unicodedata.normalize("NFKC", text)
    return "".join(char for char in text if unicodedata.category(char) != "Cf")


@dataclass(frozen=True)
class Views:
    """The forms a text is scanned in."""

    text: str
    """Visible, look-alikes folded, case kept: for provider formats."""
    lower: str
    """The same, case-folded: for the words that name a secret."""

    @classmethod
    def of(cls, text: str) -> Views:
        clean = visible(text)
        return cls(text=fold(clean), lower=fold(clean.casefold()))


def _words(pattern: str) -> re.Pattern[str]:
    """Compile a pattern of lower-case words, folded like :attr:`Views.lower`."""
    return re.compile(fold(pattern))
