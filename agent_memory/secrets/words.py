"""Secrets named in words: passwords, keys and codes given after the word that names them, in
English and in Russian ("my password is …", «пароль от почты — …», "PIN: 4921")."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from django.utils.translation import gettext_noop

from .base import (
    _CODE,
    _PASSWORD_OR_KEY,
    Detector,
    _has_digit_and_letter,
    _is_placeholder,
    _looks_like_a_key,
)
from .normal import Views, _words, fold

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


DETECTORS: tuple[Detector, ...] = (
    Detector("password_in_words", gettext_noop("a password"), _password_in_words),
    Detector("key_in_words", _PASSWORD_OR_KEY, _key_in_words),
    Detector("card_code_or_pin", _CODE, _code_named(_CARD_CODE_WORDS, min_digits=3)),
    Detector("one_time_code", _CODE, _code_named(_ONE_TIME_CODE_WORDS, min_digits=4)),
)
