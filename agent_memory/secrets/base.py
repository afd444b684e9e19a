"""What every rule shares: :class:`Detector`, the labels said to people, small value tests."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

from django.utils.translation import gettext_noop

from .normal import Views, fold


@dataclass(frozen=True)
class Detector:
    """One rule: ``name`` (stable, for tests), ``label`` (said to people), ``found(views)``."""

    name: str
    label: str
    found: Callable[[Views], bool]


def _regex(
    pattern: str,
    view: str = "text",
    flags: int = 0,
    check: Callable[[re.Match[str]], bool] | None = None,
) -> Callable[[Views], bool]:
    compiled = re.compile(pattern, flags)

    def found(views: Views) -> bool:
        for match in compiled.finditer(getattr(views, view)):
            if check is None or check(match):
                return True
        return False

    return found


_API_KEY = gettext_noop("an API key")
_TOKEN = gettext_noop("an access token")
_ACCESS_KEY = gettext_noop("an access key")
_PRIVATE_KEY = gettext_noop("a private key")
_PASSWORD_OR_KEY = gettext_noop("a password or key")
_HEADER = gettext_noop("an authorization header")
_CARD = gettext_noop("a payment card number")
_CODE = gettext_noop("a PIN or one-time code")
_IBAN = gettext_noop("a bank account number (IBAN)")
_RECOVERY = gettext_noop("recovery codes or a seed phrase")
_KEY_OR_TOKEN = gettext_noop("a key or token")


#: What is meant to be shared, so that no rule reads it as a key: an SSH public key
#: ("ssh-ed25519 AAAAC3Nza…"), a key's fingerprint ("SHA256:bBD4…"), an age recipient.
PUBLIC_KEY = re.compile(
    r"(?:ssh-(?:rsa|dss|ed25519)|ecdsa-sha2-nistp\d+|sk-(?:ssh-ed25519|ecdsa-sha2-nistp256)"
    r"@openssh\.com)\s+AAAA[A-Za-z0-9+/=]+|(?i:\b(?:sha256|sha1|md5):)[A-Za-z0-9+/=:]{16,}|"
    r"\bage1[02-9ac-hj-np-z]{58}\b"
)


#: Publishable keys (Mapbox "pk.", Stripe "pk_live_"), public by design.
PUBLISHABLE = re.compile(r"(?<![\w.-])pk[._][\w.-]+")


def _has_digit_and_letter(value: str) -> bool:
    return bool(re.search(r"\d", value) and re.search(r"[A-Za-z]", value))


def _mixed_case_and_digit(value: str) -> bool:
    return bool(
        re.search(r"[a-z]", value) and re.search(r"[A-Z]", value) and re.search(r"\d", value)
    )


def _entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    counts = {char: value.count(char) for char in set(value)}
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


_PLACEHOLDER = re.compile(
    fold(
        r"(?i)^(?:[*•.xX#_-]+|<[^>]*>|‹[^›]*›|\$\{?[^}]*\}?|\{\{?[^}]*\}?\}|%\(?\w*\)?s|"
        r"none|null|nil|true|false|empty|changeme|secret|password|your[\w-]*|example|xxx+|"
        r"\.\.\.|ваш[\w-]*|твой[\w-]*|свой[\w-]*|пароль|секрет|pass|passwd|pwd|"
        r"\[?redacted\]?|\[?hidden\]?|\[?скрыт\w*\]?|"
        # a value with "your" in it, or left off with dots: "sk-...your-key-here"
        r".*(?:your[-_]|\.\.\.|…).*|"
        # a prefix, then stand-ins: "sk-xxxx", "ghp_XXXX…", "sk_live_****"
        r"[a-z0-9]{1,10}(?:[_-][a-z0-9]{1,8})?[_-][x*•.…]{3,}…?)$"
    )
)


def _is_placeholder(value: str) -> bool:
    """``<token>``, ``YOUR_KEY``, «ВАШ_КЛЮЧ», ``xxxx``: a value left to be filled in."""
    return bool(_PLACEHOLDER.match(fold(value.strip("\"'`,;.").lower())))


def _looks_like_a_key(value: str) -> bool:
    return bool(re.search(r"\d", value) or re.search(r"[^\w\-]", value))
