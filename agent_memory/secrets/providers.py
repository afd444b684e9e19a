"""Keys and tokens by their shape: provider formats, headers, connection strings and
``NAME=value`` lines."""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Iterator

from django.utils.translation import gettext_noop

from .base import (
    _ACCESS_KEY,
    _API_KEY,
    _HEADER,
    _KEY_OR_TOKEN,
    _PASSWORD_OR_KEY,
    _PRIVATE_KEY,
    _TOKEN,
    PUBLISHABLE,
    Detector,
    _entropy,
    _is_placeholder,
    _looks_like_a_key,
    _mixed_case_and_digit,
    _regex,
)
from .normal import Views

# Provider formats. Each starts with a fixed prefix, so a match is a key, not a coincidence.
_PROVIDERS: tuple[tuple[str, str, str], ...] = (
    # OpenAI (sk-…, sk-proj-…, sk-svcacct-…) and Anthropic (sk-ant-api03-…) keys.
    ("sk_key", _API_KEY, r"(?<![A-Za-z0-9_\-])sk-(?:[A-Za-z0-9]+-){0,3}[A-Za-z0-9_\-]{20,}"),
    ("github_token", _TOKEN, r"(?<![A-Za-z0-9_])gh[pousr]_[A-Za-z0-9]{30,}"),
    ("github_pat", _TOKEN, r"(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9_]{30,}"),
    (
        "gitlab_token",
        _TOKEN,
        r"(?<![A-Za-z0-9_])gl(?:pat|dt|ft|rt|soat|cbt|ptt|imt|agent|oas)-[A-Za-z0-9_\-]{20,}",
    ),
    ("slack_token", _TOKEN, r"(?<![A-Za-z0-9])(?:xox[a-z]|xapp)-[A-Za-z0-9\-]{10,}"),
    (
        "aws_access_key",
        _ACCESS_KEY,
        r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Z0-9])",
    ),
    ("google_api_key", _API_KEY, r"(?<![A-Za-z0-9])AIza[0-9A-Za-z_\-]{35}"),
    ("stripe_key", _API_KEY, r"(?<![A-Za-z0-9])(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}"),
    # Mailchimp: 32 hex digits (which alone could be a hash) and the data-centre suffix.
    ("mailchimp_key", _API_KEY, r"(?<![A-Za-z0-9])[0-9a-f]{32}-us\d{1,2}(?![A-Za-z0-9])"),
    ("sendgrid_key", _API_KEY, r"(?<![A-Za-z0-9])SG\.[\w\-]{16,}\.[\w\-]{20,}"),
    ("telegram_bot_token", _TOKEN, r"(?<!\d)\d{8,10}:AA[A-Za-z0-9_\-]{33}(?![A-Za-z0-9_\-])"),
    ("huggingface_token", _TOKEN, r"(?<![A-Za-z0-9_])hf_[A-Za-z0-9]{30,}"),
    ("npm_token", _TOKEN, r"(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])"),
    ("jwt", gettext_noop("a token (JWT)"), r"eyJ[\w\-]{8,}\.eyJ[\w\-]{8,}\.[\w\-]{8,}"),
)


def _filled_in(match: re.Match[str]) -> bool:
    """Not a template's stand-in: a body mostly of one repeated character ("sk_live_xxxx…",
    "ghp_XXXX…") is left to be filled in; no real key repeats one character so."""
    body = re.split(r"[_.-]", match.group(0))[-1].lower()
    return bool(body) and max(body.count(char) for char in set(body)) < 0.6 * len(body)


def _sk_key_is_random(match: re.Match[str]) -> bool:
    # "sk-learn-is-a-python-library-name" has a prefix but no digits: not a key.
    return bool(re.search(r"\d", match.group(0))) and _filled_in(match)


def _provider_detectors() -> list[Detector]:
    return [
        Detector(
            name,
            label,
            _regex(pattern, check=_sk_key_is_random if name == "sk_key" else _filled_in),
        )
        for name, label, pattern in _PROVIDERS
    ]


_PROVIDER_PATTERNS = tuple(re.compile(pattern) for _, _, pattern in _PROVIDERS)
# What every format above starts with (or, for Mailchimp and Telegram, holds).
_PROVIDER_PREFIXES = re.compile(
    r"sk-|[sr]k_|gh[pousr]_|github_pat_|gl[a-z]{1,5}-|xox|xapp-|A[KSB]IA|ACCA|AIza|SG\.|hf_|"
    r"npm_|eyJ|-us\d|:AA"
)
# Groups of a key: short ones of any kind ("89ab"), longer ones with a capital or a digit
# ("SyA1b2C3d4"); a word ("followed") ends them.
_KEY_GROUPS = re.compile(
    r"[A-Za-z0-9_\-]+(?: (?:[A-Za-z0-9_\-]{2,4}|(?=[A-Za-z_\-]*[A-Z0-9])[A-Za-z0-9_\-]{5,12})"
    r"(?![A-Za-z0-9_\-])){2,}"
)


def _split_key(views: Views) -> bool:
    """A provider key written in groups ("sk-proj-AbCd EfGh 1234 …"): join them and look again."""
    if not _PROVIDER_PREFIXES.search(views.text):
        return False  # the cheap test first: this runs on every write
    # Only groups that look like a key's ("AbCd", "1234"), not words ("ghp_ followed by 36…").
    joined = _KEY_GROUPS.sub(lambda m: m.group(0).replace(" ", ""), views.text)
    if joined == views.text:
        return False
    return any(
        _filled_in(match) for pattern in _PROVIDER_PATTERNS for match in pattern.finditer(joined)
    )


def _basic_credentials(match: re.Match[str]) -> bool:
    try:
        decoded = base64.b64decode(match.group(1) + "=" * (-len(match.group(1)) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    text = decoded.decode("utf-8", "replace")
    return ":" in text and text.isprintable()


def _connection_password(match: re.Match[str]) -> bool:
    return not _is_placeholder(match.group(1))


_AWS_WORDS = re.compile(r"(?i)aws|amazon|secret")


def _aws_secret_key(views: Views) -> bool:
    if not _AWS_WORDS.search(views.text):
        return False
    for match in re.finditer(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])", views.text):
        value = match.group(0)
        if _mixed_case_and_digit(value) and "//" not in value:
            return True
    return False


_RANDOM_TOKEN = re.compile(r"(?<![A-Za-z0-9_\-])[A-Za-z0-9_\-]{32,}(?![A-Za-z0-9_\-])")


#: An Ethereum address (20 bytes in hex, mixed case as its checksum): where money is sent.
_ETHEREUM_ADDRESS = re.compile(r"(?<![\w])0x[0-9a-fA-F]{40}(?![\w])")
_BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def is_coin_address(value: str) -> bool:
    """An address of Bitcoin ("1…", "3…"), Tron ("T…") or another coin written as a version
    byte, a hash and a checksum in base 58, which is public: it is where money is sent, and says
    nothing of how to spend it."""
    if not 26 <= len(value) <= 35 or any(char not in _BASE58 for char in value):
        return False
    number = 0
    for char in value:
        number = number * 58 + _BASE58.index(char)
    raw = number.to_bytes(25, "big") if number < 1 << 200 else b""
    return (
        len(raw) == 25
        and hashlib.sha256(hashlib.sha256(raw[:21]).digest()).digest()[:4] == raw[21:]
    )


def _random_token(views: Views) -> bool:
    """A long random-looking run: both cases and digits, 32+ characters (not a publishable key
    or a coin's address)."""
    text = _ETHEREUM_ADDRESS.sub(" ", PUBLISHABLE.sub(" ", views.text))
    return any(
        _mixed_case_and_digit(m.group(0)) and not is_coin_address(m.group(0))
        for m in _RANDOM_TOKEN.finditer(text)
    )


# Most providers now issue "prefix_" + random ("dop_v1_…", "shpat_…", "pul-…", "rubygems_…"):
# a short lower-case prefix, then 24+ random letters and digits. Hashes are not written so.
_PREFIXED_TOKEN = re.compile(
    r"(?<![A-Za-z0-9_\-.])(?P<prefix>[a-z][a-z0-9]{1,9})(?:[_-][a-z0-9]{1,6}){0,2}[_-]"
    r"(?P<body>[A-Za-z0-9]{24,})(?![A-Za-z0-9])"
)
# Hashes, and publishable keys ("pk_test_…"), which are public.
_HASH_NAMES = frozenset(
    "sha sha1 sha224 sha256 sha384 sha512 md5 blake2b commit git uuid pk".split()
)


def _prefixed_token(views: Views) -> bool:
    for match in _PREFIXED_TOKEN.finditer(views.text):
        body = match.group("body")
        if (
            match.group("prefix") not in _HASH_NAMES
            and re.search(r"\d", body)
            and re.search(r"[A-Za-z]", body)
            and _entropy(body) >= 3.0
        ):
            return True
    return False


# --- NAME=value -------------------------------------------------------------------------------

_ASSIGNMENT = re.compile(
    r"(?<![A-Za-z0-9_.\-])(?P<name>[A-Za-z][A-Za-z0-9]*(?:[_.\-][A-Za-z0-9]+)*)"
    r"\s*(?P<sign>[=:])\s*[\"'`]?(?P<value>[^\s\"'`,;]+)"
)
_NAME_PARTS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z0-9]+(?![a-z])")
_SECRET_NAME_ENDS = frozenset(
    "secret token password passwd pwd pass passphrase credential credentials creds apikey "
    "secretkey privatekey dsn".split()
)


def _assignments(text: str) -> Iterator[re.Match[str]]:
    """Each ``NAME=value`` in ``text``, those inside another's value too ("file:
    DJANGO_SECRET_KEY=…" holds two)."""
    position = 0
    while (match := _ASSIGNMENT.search(text, position)) is not None:
        yield match
        position = match.start("value")


def _name_parts(name: str) -> list[str]:
    return [
        part.lower() for piece in re.split(r"[_.\-]", name) for part in _NAME_PARTS.findall(piece)
    ]


def _named_secret_assignment(views: Views) -> bool:
    """``DB_PASSWORD=kotik``, ``client_secret: …``, ``AWS_SECRET_ACCESS_KEY=…``: a compound name
    that ends in a secret's name, with a value that is not a placeholder."""
    for match in _assignments(views.text):
        name, value = match.group("name"), match.group("value")
        parts = _name_parts(name)
        if len(parts) < 2 or len(value) < 4 or _is_placeholder(value):
            continue
        last = parts[-1]
        if last in _SECRET_NAME_ENDS or (last == "key" and _looks_like_a_key(value)):
            return True
    return False


def _high_entropy_assignment(views: Views) -> bool:
    """``ANY_NAME=Zx9Qw8Er7Ty6Ui5O``: any name given a random-looking value."""
    for match in _assignments(views.text):
        name, sign, value = match.group("name"), match.group("sign"), match.group("value")
        if sign == ":" and not ("_" in name or name.isupper()):
            continue
        if (
            len(value) >= 16
            and re.fullmatch(r"[A-Za-z0-9+/_\-=.]+", value)
            and _mixed_case_and_digit(value)
            and _entropy(value) >= 3.0
        ):
            return True
    return False


_AUTHORIZATION = re.compile(
    r"(?i)(?<![\w-])(?:proxy-)?authori[sz]ation\s*[:=]\s*[\"']?(?:[A-Za-z]+\s+)?"
    r"(?P<credential>[A-Za-z0-9._~+/=\-]{8,})"
)


def _authorization_header(match: re.Match[str]) -> bool:
    credential = match.group("credential")
    return bool(re.search(r"\d", credential)) or len(credential) >= 16


def _bearer(match: re.Match[str]) -> bool:
    return bool(re.search(r"\d", match.group(1)))


DETECTORS: tuple[Detector, ...] = (
    Detector(
        "private_key",
        _PRIVATE_KEY,
        _regex(r"-{3,}\s*BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?\s*-{3,}", flags=re.IGNORECASE),
    ),
    Detector("putty_private_key", _PRIVATE_KEY, _regex(r"PuTTY-User-Key-File-\d")),
    *_provider_detectors(),
    Detector(
        "slack_webhook",
        gettext_noop("a webhook address with its secret"),
        _regex(
            r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/\-]{10,}",
            flags=re.IGNORECASE,
        ),
    ),
    Detector("split_key", _API_KEY, _split_key),
    Detector("aws_secret_key", _ACCESS_KEY, _aws_secret_key),
    Detector(
        "authorization_header", _HEADER, _regex(_AUTHORIZATION.pattern, check=_authorization_header)
    ),
    Detector(
        "bearer_token",
        _HEADER,
        _regex(r"(?i)(?<!\w)bearer\s+([A-Za-z0-9._~+/\-]{12,}=*)", check=_bearer),
    ),
    Detector(
        "basic_credentials",
        _HEADER,
        _regex(
            r"(?i)(?<!\w)basic\s+([A-Za-z0-9+/]{6,}={0,2})(?![A-Za-z0-9+/=])",
            check=_basic_credentials,
        ),
    ),
    Detector(
        "connection_string",
        gettext_noop("a connection string with a password"),
        _regex(
            r"(?<![\w+.\-])[A-Za-z][A-Za-z0-9+.\-]{1,20}://[^\s:/@]*:([^\s@/]+)@[\w.\-\[]",
            check=_connection_password,
        ),
    ),
    Detector("named_secret_assignment", _PASSWORD_OR_KEY, _named_secret_assignment),
    Detector("high_entropy_assignment", _PASSWORD_OR_KEY, _high_entropy_assignment),
    Detector("random_token", _KEY_OR_TOKEN, _random_token),
    Detector("prefixed_token", _KEY_OR_TOKEN, _prefixed_token),
)
