"""The secrets detector: credentials, card numbers and codes that memory never stores.

A note is text a person or a model wrote in a chat, not a source file, so the detector reads it
the way people write secrets down: provider keys and tokens, headers, connection strings,
``NAME=value`` lines, card numbers, codes named as such, and passwords given in words, in
English and in Russian ("my password is …", «пароль от почты — …»).

Text is scanned in a normalised form: NFKC, format characters (zero-width, bidi) removed and
look-alike Cyrillic and Greek letters folded to Latin, so ``sk‑proj`` spelled with a Cyrillic
``ѕ`` or a key with a zero-width space inside is still a key. Each :class:`Detector` is one
rule with its own name; :func:`find_secret` runs them all.

Values with a checksum are validated (Luhn for cards, mod 97 for IBANs, BIP-39 for seed
phrases), and words that merely talk about a secret ("forgot my password", "uses 1Password",
"PIN changed in 2023") pass.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from functools import lru_cache

from django.utils.translation import gettext_noop
from mnemonic import Mnemonic

# --- normalisation ----------------------------------------------------------------------------

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


# --- detectors --------------------------------------------------------------------------------


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
    r"(?i)^(?:[*•.xX#_-]+|<[^>]*>|\$\{?[^}]*\}?|\{\{?[^}]*\}?\}|%\(?\w*\)?s|"
    r"none|null|nil|true|false|empty|changeme|secret|password|your[\w-]*|example|xxx+|\.\.\.)$"
)


def _is_placeholder(value: str) -> bool:
    return bool(_PLACEHOLDER.match(value.strip("\"'`,;.")))


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


def _sk_key_is_random(match: re.Match[str]) -> bool:
    # "sk-learn-is-a-python-library-name" has a prefix but no digits: not a key.
    return bool(re.search(r"\d", match.group(0)))


def _provider_detectors() -> list[Detector]:
    return [
        Detector(
            name,
            label,
            _regex(pattern, check=_sk_key_is_random if name == "sk_key" else None),
        )
        for name, label, pattern in _PROVIDERS
    ]


_PROVIDER_PATTERNS = tuple(re.compile(pattern) for _, _, pattern in _PROVIDERS)
_SPACE_BETWEEN_CHUNKS = re.compile(r"(?<=[A-Za-z0-9_\-]) (?=[A-Za-z0-9_\-])")


def _split_key(views: Views) -> bool:
    """A provider key written in groups ("sk-proj-AbCd EfGh 1234 …"): join them and look again."""
    joined = _SPACE_BETWEEN_CHUNKS.sub("", views.text)
    if joined == views.text:
        return False
    return any(pattern.search(joined) for pattern in _PROVIDER_PATTERNS)


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


def _random_token(views: Views) -> bool:
    """A long random-looking run: both cases and digits, 32+ characters."""
    return any(_mixed_case_and_digit(m.group(0)) for m in _RANDOM_TOKEN.finditer(views.text))


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


def _name_parts(name: str) -> list[str]:
    return [
        part.lower() for piece in re.split(r"[_.\-]", name) for part in _NAME_PARTS.findall(piece)
    ]


def _named_secret_assignment(views: Views) -> bool:
    """``DB_PASSWORD=kotik``, ``client_secret: …``, ``AWS_SECRET_ACCESS_KEY=…``: a compound name
    that ends in a secret's name, with a value that is not a placeholder."""
    for match in _ASSIGNMENT.finditer(views.text):
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
    for match in _ASSIGNMENT.finditer(views.text):
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


def _looks_like_a_key(value: str) -> bool:
    return bool(re.search(r"\d", value) or re.search(r"[^\w\-]", value))


# --- cards and bank accounts ------------------------------------------------------------------

_IMEI = re.compile(r"(?i)imei\W*$")
_DIGIT_RUN = re.compile(r"(?<![\d.,])\d(?:[ .\-]?\d)*")


def luhn_valid(digits: str) -> bool:
    """The Luhn checksum that payment card numbers satisfy."""
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char)
        if index % 2 == 1:
            value *= 2
            if value > 9:
                value -= 9
        total += value
    return total % 10 == 0


def _is_isbn13(digits: str) -> bool:
    # About one ISBN-13 in ten happens to be Luhn-valid; its own checksum tells them apart.
    if len(digits) != 13 or not digits.startswith(("978", "979")):
        return False
    weighted = sum(int(char) * (3 if index % 2 else 1) for index, char in enumerate(digits))
    return weighted % 10 == 0


def _card_number(views: Views) -> bool:
    """13 to 19 Luhn-valid digits, plain or in groups of 3 to 6 ("4111.1111.1111.1111")."""
    text = views.text
    for match in _DIGIT_RUN.finditer(text):
        # "+86 138 0013 8002": an international phone number; cards are never written with "+".
        # A phone's IMEI is Luhn-checked too.
        before = text[: match.start()].rstrip()
        if before.endswith("+") or _IMEI.search(before[-12:]):
            continue
        groups = re.split(r"[ .\-]", match.group(0))
        # The number may run on into an expiry date ("4111 1111 1111 1111 12/27"): try the
        # leading groups too.
        for count in range(len(groups), 0, -1):
            digits = "".join(groups[:count])
            grouped = count == 1 or all(3 <= len(group) <= 6 for group in groups[:count])
            if (
                13 <= len(digits) <= 19
                and grouped
                and luhn_valid(digits)
                and not _is_isbn13(digits)
            ):
                return True
    return False


#: IBAN length by country (the ISO 13616 registry).
_IBAN_LENGTHS = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22,
    "BI": 27, "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DJ": 27,
    "DK": 18, "DO": 28, "EE": 20, "EG": 29, "ES": 24, "FI": 18, "FK": 18, "FO": 18, "FR": 27,
    "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28, "HN": 28, "HR": 21, "HU": 28,
    "IE": 22, "IL": 23, "IQ": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28,
    "LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "LY": 25, "MC": 27, "MD": 24, "ME": 22,
    "MK": 19, "MN": 20, "MR": 27, "MT": 31, "MU": 30, "NI": 28, "NL": 18, "NO": 15, "OM": 23,
    "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "RU": 33, "SA": 24,
    "SC": 31, "SD": 18, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "SO": 23, "ST": 25, "SV": 28,
    "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20, "YE": 30,
}  # fmt: skip
_IBAN_START = re.compile(r"(?<![A-Za-z0-9])([A-Za-z]{2})\d{2}")


def iban_valid(iban: str) -> bool:
    """The ISO 7064 mod 97 check of an IBAN written without spaces."""
    rearranged = iban[4:] + iban[:4]
    return int("".join(str(int(char, 36)) for char in rearranged)) % 97 == 1


def _iban(views: Views) -> bool:
    text = views.text
    for match in _IBAN_START.finditer(text):
        length = _IBAN_LENGTHS.get(match.group(1).upper())
        if length is None:
            continue
        # Collect the IBAN's characters, allowing single spaces between groups.
        collected: list[str] = []
        position = match.start()
        while position < len(text) and len(collected) < length:
            char = text[position]
            if char.isascii() and char.isalnum():
                collected.append(char.upper())
            elif char != " " or text[position - 1] == " ":
                break
            position += 1
        ends_here = position == len(text) or not text[position].isalnum()
        if len(collected) == length and ends_here and iban_valid("".join(collected)):
            return True
    return False


# --- secrets named in words -------------------------------------------------------------------

_TOKEN_RE = re.compile(r"[:=—–]|[^\s:=—–]+")
_QUOTES = "\"'`«»“”„‘’"
_CONNECTORS = frozenset(
    fold(word) for word in ": = — – - -- is was are это будет такой следующий".split()
)
_FILLERS = frozenset(fold(word) for word in "now still currently just теперь сейчас вот".split())
_OBJECT_PREPOSITIONS = frozenset(fold(word) for word in "for to of on at от к ко для на".split())


@dataclass(frozen=True)
class _Value:
    text: str
    stated: bool
    """A connector (":", "is", "—") stood between the name and the value."""
    quoted: bool
    start: int


def _value_after(lower: str, end: int, max_object_words: int = 4) -> _Value | None:
    """The value given after a secret's name that ends at ``end``.

    Understands an object ("пароль от почты", "password for the bank"), then an optional
    connector (":", "=", "—", "is", "это"), then the value itself.
    """
    tokens = list(_TOKEN_RE.finditer(lower, end, min(len(lower), end + 160)))
    index = 0
    if index < len(tokens) and tokens[index].group(0) in _OBJECT_PREPOSITIONS:
        index += 1
        while True:
            if index >= len(tokens) or index > max_object_words:
                return None
            if tokens[index].group(0) in _CONNECTORS:
                break
            # "пароль от почты qwerty123": the value follows the object without a connector.
            candidate = _read_value(lower, tokens[index].start(), stated=False)
            if index >= 2 and candidate is not None and _strong(candidate):
                return candidate
            index += 1
    stated = False
    while index < len(tokens) and tokens[index].group(0) in _CONNECTORS:
        stated = True
        index += 1
    while stated and index < len(tokens) and tokens[index].group(0) in _FILLERS:
        index += 1
    if index >= len(tokens):
        return None
    return _read_value(lower, tokens[index].start(), stated)


def _named_values(
    words: re.Pattern[str], views: Views, max_object_words: int = 4
) -> Iterator[tuple[re.Match[str], _Value]]:
    """Each name of a secret found by ``words`` with the value given after it."""
    for match in words.finditer(views.lower):
        value = _value_after(views.lower, match.end(), max_object_words)
        if value is not None:
            yield match, value


def _read_value(lower: str, start: int, stated: bool) -> _Value | None:
    if lower[start] in _QUOTES:
        closing = re.compile(r"[\"'`»”“‘’]")
        found = closing.search(lower, start + 1)
        text = lower[start + 1 : found.start() if found else len(lower)]
        return _Value(text.strip(), stated, quoted=True, start=start + 1) if text.strip() else None
    match = re.compile(r"[^\s]+").match(lower, start)
    if match is None:
        return None
    text = match.group(0).rstrip(".,;:)")
    return _Value(text, stated, quoted=False, start=start) if text else None


_DESCRIPTIVE = frozenset(
    fold(word)
    for word in """
    the a an in on at to not no too very so same different long short weak strong simple complex
    easy hard secure safe unsafe correct incorrect wrong right invalid valid required optional
    expired changed reset saved stored kept written shared known unknown needed necessary missing
    empty blank set case his her my your their our its that this what which somewhere there here
    still also now always never usually only just being protected encrypted hidden forgotten lost
    old new default temporary random generated managed about like something anything nothing one
    two three hint manager vault inside under same unique mandatory please see ask check use call
    from with without for by after before via must should will would can cannot may might has
    had does did expires changes needs works contains includes matches follows

    в на у не нет тот та то же такой простой сложный слабый надёжный надежный длинный короткий
    старый новый неверный верный другой общий один одинаковый везде записан записана сохранён
    сохранен хранится лежит есть был была там здесь где-то от для к менялся сменён сменен забыт
    утерян нужен нужно обязателен обязательно стандартный временный случайный см см. совпадает
    сложно просто легко трудно долго давно всегда никогда иногда тоже также только уже ещё еще
    мой моя мое моё его её ее их наш ваш твой свой какой какая который которая спросить узнать
    посмотреть смотреть менять сменить поменять
    """.split()
)
_DESCRIPTIVE_ENDINGS = tuple(
    fold(ending)
    for ending in """
    ed ing ly able ible less ful
    ый ий ой ая яя ое ее ые ие ого его ому ему ан ян ен ён на ны ть ться ет ит ют ут ат ят ал ил
    ла ли ся
    """.split()
)


def _is_descriptive(word: str) -> bool:
    word = word.strip(_QUOTES + "!?.,;:()")
    return word in _DESCRIPTIVE or word.endswith(_DESCRIPTIVE_ENDINGS) or len(word) < 4


def _is_year(value: str) -> bool:
    return bool(re.fullmatch(r"(?:19|20)\d\d", value))


def _strong(value: _Value) -> bool:
    """Looks like a password even without a connector: digits with letters, symbols, a PIN-like
    run of digits that is not a year, or a quoted word."""
    text = value.text
    if _is_placeholder(text):
        return False
    if value.quoted:
        return len(text) >= 4 and not _is_descriptive(text.split()[0])
    if re.fullmatch(r"\d{4,}", text):
        return not _is_year(text)
    if len(text) < 4:
        return False
    return _has_digit_and_letter(text) or bool(re.search(r"[^\w\-'’]", text))


def _password_shape(value: _Value) -> bool:
    """After a connector any shape will do ("is correcthorsebatterystaple", "— котик"), unless it
    is a word that describes the password ("is long", "— на стикере")."""
    if _strong(value):
        return True
    return value.stated and not value.quoted and not _is_descriptive(value.text)


_PASSWORD_WORDS = _words(
    r"(?<!\w)(?:password|passwd|passphrase|pass\s?phrase|passcode|access\s+code|code\s?word|"
    r"(?:pass|pwd|pw)(?=\s*[:=]|\s+is\s)|"
    r"пароль|пароля|паролю|паролем|пароле|парольн\w*\s+фраз\w*|код\w*\s+доступа|кодов\w*\s+слов\w*|"
    r"пасс(?=\s*[:=—–]))(?!\w)"
)


_LOGIN_BEFORE = _words(r"(?<!\w)(?:login|username|user\s+name|логин|имя\s+пользователя)(?!\w)")


def _password_in_words(views: Views) -> bool:
    """ "my password is …", "wifi password: …", «пароль от почты qwerty123»."""
    for match, value in _named_values(_PASSWORD_WORDS, views):
        # "login ivan password qwerty": after a login the next word is the password itself.
        if _LOGIN_BEFORE.search(views.lower, max(0, match.start() - 40), match.start()):
            value = replace(value, stated=True)
        # "pass:" and "pw:" have other senses ("Boarding pass: seat 14C"): they need a value
        # that looks like a password by itself.
        short = match.group(0) in ("pass", "pwd", "pw")
        if _strong(value) if short else _password_shape(value):
            return True
    return False


# "api key is 3fa9…", "secret: hunter2", "токен: abc123". Strong words name nothing but a
# credential; weak ones have everyday senses too ("Ключ: под ковриком", "Secret: surprises"),
# so their value must also look like one (a digit or a symbol).
_KEY_WORDS = _words(
    r"(?<!\w)(?:(?P<strong>api[\s_-]?key|secret[\s_-]?key|private[\s_-]?key|"
    r"(?:access|auth|bearer|api|refresh)[\s_-]?token|client[\s_-]?secret|ключ\w*\s+api|"
    r"api[\s-]?ключ\w*|секретн\w*\s+ключ\w*|токен\w*\s+доступа)|"
    r"(?P<weak>secret|token|key|ключ|токен|секрет))(?!\w)"
)


_REFERENCE = re.compile(r"[a-z]+:\d+")


def _key_in_words(views: Views) -> bool:
    for match, value in _named_values(_KEY_WORDS, views, max_object_words=2):
        if not value.stated or _is_placeholder(value.text):
            continue
        if match.group("strong") and len(value.text) >= 4 and not _is_descriptive(value.text):
            return True
        # A weak word's value must look like a key by itself, and not like a reference to
        # something else ("key=\"memory:3\"" in pasted markup).
        if (
            _looks_like_a_key(value.text)
            and len(value.text) >= 4
            and not _REFERENCE.fullmatch(value.text)
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


_CARD_CODE_WORDS = _words(
    r"(?<!\w)(?:cvv-?код\w*|cvv2?|cvc2?|cvn|csc|pin(?:[\s-]*code)?|пин(?:[\s-]*код\w*)?)(?!\w)"
)
_ONE_TIME_CODE_WORDS = _words(
    r"(?<!\w)(?:one[\s-]?time\s+(?:pass)?code|one[\s-]?time\s+password|otp(?:\s+code)?|totp|"
    r"(?:2fa|sms|verification|confirmation|security|login|sign[\s-]?in|auth(?:entication)?)"
    r"[\s-]+code|code\s+from\s+(?:the\s+|an?\s+)?(?:sms|text(?:\s+message)?|message)|код\w*\s+из\s+(?:смс|sms|сообщения)|(?:смс|sms)[\s-]*код\w*|"
    r"код\w*\s+(?:подтверждения|верификации|для\s+входа|2fa)|одноразов\w*\s+(?:код\w*|пароль)|"
    r"проверочн\w*\s+код\w*)(?!\w)"
)
_CODE_DIGITS = re.compile(r"\d(?:[ \-]?\d){2,7}")


def _code_named(words: re.Pattern[str], min_digits: int) -> Callable[[Views], bool]:
    """A code named as such ("PIN: 4921", «код из СМС 482 913»): digits, maybe in groups."""

    def found(views: Views) -> bool:
        for _, value in _named_values(words, views):
            digits = _CODE_DIGITS.match(views.lower, value.start)
            if (
                digits is not None
                and not views.lower[digits.end() : digits.end() + 1].isalnum()
                and len(re.sub(r"\D", "", digits.group(0))) >= min_digits
            ):
                return True
        return False

    return found


_RECOVERY_WORDS = _words(
    r"(?<!\w)(?:recovery|backup|scratch|emergency)\s+(?:codes?|keys?)|"
    r"(?:резервн|запасн)\w*\s+код\w*|код\w*\s+восстановлени\w*|ключ\w*\s+восстановлени\w*"
)


def _recovery_codes(views: Views) -> bool:
    for _, value in _named_values(_RECOVERY_WORDS, views, max_object_words=2):
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
    r"(?<!\w)(?:seed(?:\s+phrase|\s+words)?|mnemonic(?:\s+phrase)?|recovery\s+phrase|"
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
        for skip in range(min(4, len(tokens)) + 1):
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
    Detector("random_token", gettext_noop("a key or token"), _random_token),
    Detector("password_in_words", gettext_noop("a password"), _password_in_words),
    Detector("key_in_words", _PASSWORD_OR_KEY, _key_in_words),
    Detector("card_number", _CARD, _card_number),
    Detector("card_code_or_pin", _CODE, _code_named(_CARD_CODE_WORDS, min_digits=3)),
    Detector("one_time_code", _CODE, _code_named(_ONE_TIME_CODE_WORDS, min_digits=4)),
    Detector("iban", _IBAN, _iban),
    Detector("recovery_codes", _RECOVERY, _recovery_codes),
    Detector("seed_phrase_named", _RECOVERY, _seed_phrase_named),
    Detector("seed_phrase", _RECOVERY, _seed_phrase),
)


def find_secret(text: str, detectors: Iterable[Detector] = DETECTORS) -> str | None:
    """Describe the secret ``text`` seems to contain, or return ``None``.

    The description is in English and in the message catalogue: pass it through ``gettext`` to
    show it to people.
    """
    views = Views.of(text)
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
