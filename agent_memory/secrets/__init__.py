"""The secrets detector: credentials, card numbers and codes that memory never stores.

A note is text a person or a model wrote in a chat, not a source file, so the detector reads it
the way people write secrets down: provider keys and tokens, headers, connection strings,
``NAME=value`` lines, card numbers, codes named as such, government identity numbers named as
such, and passwords given in words, in English and in Russian, the short and slang words too
("my password is …", "pw: …", «пароль от почты — …», «пасс: …», a login with its password, a
Wi-Fi network with its key).

The families live in their own modules: :mod:`.normal` (the normalised views, also used by
:mod:`agent_memory.prompt`), :mod:`.providers` (shapes of keys and tokens), :mod:`.words`
(secrets named in words), :mod:`.identity`, :mod:`.numbers` (cards, IBANs), :mod:`.phrases`
(recovery codes, seed phrases) and :mod:`.maintained` (Betterleaks' provider rules, run last,
where installed). :func:`find_secret` is the one entry point: :mod:`agent_memory.rules` calls it
for every note's text and categories, whichever way the note came in.

Text is scanned in a normalised form: NFKC, format characters (zero-width, bidi) removed and
look-alike Cyrillic and Greek letters folded to Latin, so ``sk‑proj`` spelled with a Cyrillic
``ѕ`` or a key with a zero-width space inside is still a key. Each :class:`Detector` is one
rule with its own name; :func:`find_secret` runs them all.

Values with a checksum are validated (Luhn for cards, mod 97 for IBANs, BIP-39 for seed
phrases), and words that merely talk about a secret ("forgot my password", "uses 1Password",
"PIN changed in 2023") pass.
"""

from __future__ import annotations

from collections.abc import Iterable

from . import identity, maintained, numbers, phrases, providers, words
from .base import PUBLIC_KEY, Detector
from .normal import Views, fold, visible
from .numbers import iban_valid, luhn_valid

DETECTORS: tuple[Detector, ...] = (
    *providers.DETECTORS,
    *words.DETECTORS,
    *identity.DETECTORS,
    *numbers.DETECTORS,
    *phrases.DETECTORS,
    # Last: it only adds what the app's own rules do not know, and their labels say more.
    *maintained.DETECTORS,
)


def find_secret(text: str, detectors: Iterable[Detector] = DETECTORS) -> str | None:
    """Describe the secret ``text`` seems to contain, or return ``None``.

    The description is in English and in the message catalogue: pass it through ``gettext`` to
    show it to people.
    """
    # What is meant to be shared (public keys, fingerprints) is left out before any rule reads.
    views = Views.of(PUBLIC_KEY.sub(" ", text))
    for detector in detectors:
        if detector.found(views):
            return detector.label
    return None


__all__ = [
    "DETECTORS",
    "Detector",
    "Views",
    "find_secret",
    "fold",
    "iban_valid",
    "luhn_valid",
    "visible",
]
