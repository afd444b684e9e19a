"""Recovery codes and wallet seed phrases (BIP-39 words, named or checksum-valid)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

from mnemonic import Mnemonic

from .base import _RECOVERY, Detector
from .normal import Views, _words
from .words import _named_values

_RECOVERY_WORDS = _words(
    r"(?<!\w)(?:recovery|backup|scratch|emergency)\s+(?:codes?|keys?)|"
    r"(?:резервн|запасн)\w*\s+код\w*|код\w*\s+восстановлени\w*|ключ\w*\s+восстановлени\w*"
)


def _recovery_codes(views: Views) -> bool:
    for _, value in _named_values(_RECOVERY_WORDS, views, max_object_words=4):
        code = value.text
        if re.fullmatch(r"[a-z0-9\-]{4,}", code) and re.search(r"\d", code):
            if value.stated or len(code) >= 6:
                return True
    return False


@lru_cache(maxsize=1)
def _bip39() -> tuple[Mnemonic, frozenset[str]]:
    mnemonic = Mnemonic("english")
    return mnemonic, frozenset(mnemonic.wordlist)


_SEED_WORDS = _words(
    r"(?<!\w)(?:seed(?:\s+phrase|\s+words)?|mnemonic(?:\s+phrase)?|recovery\s+(?:phrase|words)|"
    r"(?:12|24)\s+(?:secret\s+)?words|мнемоник\w*|(?:12|24)\s+слов\w*|"
    r"secret\s+(?:recovery\s+)?phrase|wallet\s+words|сид[\s-]*фраз\w*|сид|"
    r"мнемоническ\w*\s+фраз\w*|секретн\w*\s+фраз\w*|фраз\w*\s+восстановлени\w*)(?!\w)"
)


def _word_runs(text: str) -> Iterator[list[str]]:
    """Runs of consecutive BIP-39 words in ``text``."""
    _, wordlist = _bip39()
    run: list[str] = []
    for word in re.findall(r"[a-z]+|[^a-z\s]+", text):
        if word in wordlist:
            run.append(word)
        else:
            if run:
                yield run
            run = []
    if run:
        yield run


def _seed_phrase_named(views: Views) -> bool:
    """ "seed phrase: abandon ability …": after the name (and maybe an object or "is"), twelve or
    more BIP-39 words in a row, one of them possibly misspelt; the checksum need not hold."""
    _, wordlist = _bip39()
    for match in _SEED_WORDS.finditer(views.lower):
        tokens = re.findall(r"[^\s,;:—–]+", views.lower[match.end() : match.end() + 400])
        for skip in range(min(6, len(tokens)) + 1):
            listed = missing = 0
            for word in tokens[skip : skip + 24]:
                if word in wordlist:
                    listed += 1
                elif missing == 0 and listed:
                    missing = 1
                else:
                    break
            if listed >= 11 and listed + missing >= 12:
                return True
    return False


def _seed_phrase(views: Views) -> bool:
    """Twelve to twenty-four BIP-39 words in a row with a valid checksum, named or not."""
    mnemonic, _ = _bip39()
    for run in _word_runs(views.lower):
        for size in (24, 21, 18, 15, 12):
            for start in range(len(run) - size + 1):
                if mnemonic.check(" ".join(run[start : start + size])):
                    return True
    return False


DETECTORS: tuple[Detector, ...] = (
    Detector("recovery_codes", _RECOVERY, _recovery_codes),
    Detector("seed_phrase_named", _RECOVERY, _seed_phrase_named),
    Detector("seed_phrase", _RECOVERY, _seed_phrase),
)
