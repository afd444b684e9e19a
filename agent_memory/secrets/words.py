"""Secrets named in words: passwords, keys and codes given after the word that names them, in
English and in Russian ("my password is …", «пароль от почты — …», "PIN: 4921")."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from itertools import pairwise

from django.utils.translation import gettext_noop

from .base import (
    _CODE,
    _PASSWORD_OR_KEY,
    PUBLISHABLE,
    Detector,
    _entropy,
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
_FILLERS = frozenset(
    fold(word)
    for word in """now still currently just literally actually simply probably basically
    теперь сейчас вот просто прям типа вроде""".split()
)
_OBJECT_PREPOSITIONS = frozenset(
    fold(word) for word in "for to of on at from от к ко для на ot dlya".split()
)


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
    date name birthday again anymore twice once today yesterday tomorrow lately recently soon

    в на у не нет тот та то же такой простой сложный слабый надёжный надежный длинный короткий
    старый новый неверный верный другой общий один одинаковый везде записан записана сохранён
    сохранен хранится лежит есть был была там здесь где-то от для к менялся сменён сменен забыт
    утерян нужен нужно обязателен обязательно стандартный временный случайный см см. совпадает
    сложно просто легко трудно долго давно всегда никогда иногда тоже также только уже ещё еще
    мой моя мое моё его её ее их наш ваш твой свой какой какая который которая спросить узнать
    посмотреть смотреть менять сменить поменять дата имя фамилия кличка снова опять вчера сегодня
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


_ENGLISH_ENDINGS = ("ed", "ing", "ly", "able", "ible", "less", "ful")


def _is_descriptive(word: str) -> bool:
    word = word.strip(_QUOTES + "!?.,;:()")
    # A word in Latin letters only is read with the English endings: folded, the Russian
    # ones spell Latin ones too ("canoe" ends in a folded «ое»).
    endings = _ENGLISH_ENDINGS if word.isascii() else _DESCRIPTIVE_ENDINGS
    return word in _DESCRIPTIVE or word.endswith(endings) or len(word) < 4


def _has_digit(value: str) -> bool:
    return any(char.isdigit() for char in value)


def _is_year(value: str) -> bool:
    return bool(re.fullmatch(r"(?:19|20)\d\d", value))


def _strong(value: _Value) -> bool:
    """Looks like a password even without a connector: digits with letters, symbols, a PIN-like
    run of digits that is not a year, or a quoted word."""
    text = value.text
    if _is_placeholder(text):
        return False
    if value.quoted:
        # «синий трактор 42»: a quoted phrase with a digit is one, whatever its first word.
        return len(text) >= 4 and (not _is_descriptive(text.split()[0]) or _has_digit(text))
    if re.fullmatch(r"\d{4,}", text):
        return not _is_year(text)
    if len(text) < 4:
        return False
    # Brackets round a word are an aside ("pass (the Unix tool)"), not a password's symbols.
    return _has_digit_and_letter(text) or bool(re.search(r"[^\w\-'’]", text.strip("()[]")))


def _password_shape(value: _Value) -> bool:
    """After a connector any shape will do ("is correcthorsebatterystaple", "— котик"), unless it
    is a word that describes the password ("is long", "— на стикере") or a mask ("********")."""
    if _is_placeholder(value.text):
        return False
    if _strong(value):
        return True
    return value.stated and not value.quoted and not _is_descriptive(value.text)


_NETWORK = (
    r"(?:wi-?fi|wlan|wpa[23]?(?:-psk)?|wireless|network|router|hotspot|"
    r"вай-?фа\w*|wi-?fi\w*|сет[ьи]|роутер\w*|точк\w*\s+доступа)"
)


def _typos(*words: str) -> str:
    """The misspellings of ``words`` one slip away (a letter dropped, two swapped), as regex."""
    slips = set()
    for word in words:
        for place in range(len(word)):
            slips.add(word[:place] + word[place + 1 :])
            if place + 1 < len(word):
                slips.add(word[:place] + word[place + 1] + word[place] + word[place + 2 :])
    slips -= set(words)
    return "|".join(sorted((re.escape(slip) for slip in slips if len(slip) >= 5), key=len)[::-1])


# "passwrod", "pasword", «парль», «пороль»: the common slips of the two words.
_TYPOS = _typos("password", "пароль") + "|пороль"

# Every word a password is given after, the short and slang ones too. "pass" alone has other
# senses ("Boarding pass: seat 14C", "bus pass"): it is told apart in _password_in_words.
_PASSWORD_WORDS = _words(
    rf"(?<!\w)(?:passwords?|{_TYPOS}|passwd|passwort|passphrase|pass\s?phrase|passcode|pass\s?code|"
    r"parol\w*|"
    r"access\s+code|code\s?word|pwd|pw|p[\s-]?word|pwrd|pass\s+word|pass|"
    r"(?:door|gate|alarm|garage|lock|locker|entry|intercom|buzzer|keypad|building|safe)\s+code|"
    rf"{_NETWORK}\s+(?:security\s+)?key|"
    r"парольн\w*\s+фраз\w*|парол(?:[ьяюеи]\w*)?|код\w*\s+доступа|кодов\w*\s+слов\w*|"
    r"пасс|пас+в[оа]рд\w*|"
    r"код\w*\s+(?:от\s+|для\s+|к\s+)?(?:домофон\w*|двер\w*|подъезд\w*|сейф\w*|сигнализаци\w*|"
    r"калитк\w*|ворот\w*|замк\w*|шкафчик\w*)|"
    rf"ключ\w*\s+(?:от\s+|к\s+|для\s+)?{_NETWORK})(?!\w)"
)

# A login, an account or a network named just before: the next word after "pass", "key" or
# "ключ" is then the password itself ("login ivan pass hunter2", "SSID HomeNet, key bluebird").
_CONTEXT_BEFORE = _words(
    r"(?<!\w)(?:login|username|user\s+name|user|e-?mail|account|логин\w*|юзер\w*|учётк\w*|"
    r"учетк\w*|имя\s+пользователя|ssid|сет[ьи]|network|wi-?fi|вай-?фа\w*)(?!\w)"
)


_SOMETHING_ELSE = _words(
    r"\s*(?:hint|manager|policy|reset|requirements?|rules?|strength|field|prompt|expir\w*|itself|"
    r"подсказк\w*|менеджер\w*|политик\w*|требовани\w*|сброс\w*|сам\w*)(?!\w)"
)


def _in_a_placeholder(lower: str, match: re.Match[str]) -> bool:
    """ "<password>", "${PASSWORD}", "postgres://user:password@host": the word stands in a
    template for the value."""
    if lower[max(0, match.start() - 1) : match.start()] in ("<", "{", "[", "$", "%", "‹"):
        return True
    word_start = lower.rfind(" ", 0, match.start()) + 1
    return "://" in lower[word_start : match.start()]


def _names_no_value(lower: str, match: re.Match[str]) -> bool:
    """The password's name found by ``match`` stands in a template or names another thing
    ("password hint", "password manager"): no value follows it."""
    return _in_a_placeholder(lower, match) or bool(_SOMETHING_ELSE.match(lower, match.end()))


def _password_in_words(views: Views) -> bool:
    """ "my password is …", "wifi pass: …", «пароль от почты qwerty123», «пасс: котик»."""
    for match, value in _named_values(_PASSWORD_WORDS, views):
        word = match.group(0)
        if _names_no_value(views.lower, match):
            continue
        context = _CONTEXT_BEFORE.search(views.lower, max(0, match.start() - 40), match.start())
        if context and not value.stated:
            # "login ivan pass hunter2", "wifi pass bluebird": the next word is the password if
            # it looks like one or ends the clause ("email password last week after…" is talk).
            after = views.lower[value.start + len(value.text) : value.start + len(value.text) + 2]
            if _strong(value) or not after.strip() or after.lstrip()[:1] in ",.;!?)":
                value = replace(value, stated=True)
        if word == "pwd" and value.text.startswith(("/", "~")):
            continue  # "pwd: /home/ivan" is a working directory
        # "pass" needs a login or network before it, or a value that looks like a password
        # by itself: "Boarding pass: seat 14C" and "bus pass 42" are not passwords.
        if word == "pass" and not context:
            if _strong(value) and not re.fullmatch(r"[\d\s-]+", value.text):
                return True
            continue
        if _password_shape(value):
            return True
    return False


_BEFORE_A_YEAR = frozenset(
    fold(word) for word in "in since from until till by before after в с до после от к".split()
)


# "SSID HomeNet_5G, key bluebird", «Сеть Keenetic-1234, ключ: морковка»: a network named, then
# its key, in any shape that is not a word describing it.
_NETWORK_BEFORE = _words(rf"(?<!\w)(?:ssid|{_NETWORK})(?!\w)")
_KEY_WORD = _words(r"(?<!\w)(?:key|ключ)(?!\w)")


_NETWORK_NAME = re.compile(r"[\"'«“]|\S*[\d_\-]\S*")


def _network_key(views: Views) -> bool:
    for match, value in _named_values(_KEY_WORD, views, max_object_words=2):
        network = _NETWORK_BEFORE.search(views.lower, max(0, match.start() - 50), match.start())
        if network is None:
            continue
        # Between them a network's name ("HomeNet_5G", "Keenetic-1234"), so that "network of
        # friends, key people" is not read as a key.
        between = views.lower[network.end() : match.start()].strip(" :—–-").split()
        named = 1 <= len(between) <= 2 and bool(_NETWORK_NAME.match(between[0]))
        if (value.stated or named or _strong(value)) and _password_shape(
            replace(value, stated=True)
        ):
            return True
    return False


# "ivan@mail.ru:Kotik2024", "creds: admin/admin", «учётка: ivanov / Zaq12wsx»: a login and a
# password written as a pair.
_PAIR_WORDS = _words(
    r"(?<!\w)(?:creds|credentials|login\s+details|log-?in\s*/\s*pass\w*|"
    r"логин\s*(?:/|и)\s*пароль|учётк\w*|учетк\w*|доступ\w*|данные\s+для\s+входа|"
    r"учётн\w*\s+данн\w*|учетн\w*\s+данн\w*)(?!\w)"
)
_PAIR = re.compile(r"(?<![\w.@+\-])([a-z0-9._@+\-]{2,})(?:\s*[/|]\s*|:)([^\s/,;]+)(?!/)")
_EMAIL_PAIR = re.compile(
    r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+(?:(?P<colon>:)|\s*[/|]\s*)(?P<password>[^\s,;]+)"
)


# "Work Jira login: anna.kowalski / Summer2024!": a login's word, then straight away the pair.
_LOGIN_WORDS = _words(r"(?<!\w)(?:log-?in|username|user\s+name|логин\w*)\s*[:—–=]\s*")


# "ssh in as deploy:Vx7!qLm2rPz", «админка: admin:Zhuravl!2718»: a login and its password
# joined by a colon, the password with a symbol, or both cases and a digit.
_COLON_PAIR = re.compile(
    r"(?<![\w./@:-])(?P<login>[A-Za-z][\w.-]{1,30}):(?P<password>[^\s:/@,;]{6,64})(?![\w:/@])"
)
_SCHEMES = frozenset(
    "http https ftp ftps sftp mailto tel sms urn data file git ssh ws wss redis postgres "
    "postgresql mysql mongodb amqp note todo re fw fwd tip step".split()
)
# "Costco site: jen.okafor / Lagos-Sun-2022": an address-like login, a slash, a password.
_SPACED_PAIR = re.compile(r"(?<![\w.@+\\-])[\w.+\\-]*[._@\\][\w.+-]+\s+/\s+(?P<password>\S{6,64})")


def _joined_pair(views: Views) -> bool:
    for match in _COLON_PAIR.finditer(views.text):
        password = match.group("password").rstrip(".)!?") or match.group("password")
        if match.group("login").lower() in _SCHEMES or not _has_digit_and_letter(password):
            continue
        if re.search(r"[^\w.\-]", password) or (
            re.search(r"[a-z]", password) and re.search(r"[A-Z]", password)
        ):
            return True
    for match in _SPACED_PAIR.finditer(views.lower):
        value = _Value(match.group("password").rstrip(".,;)"), True, False, match.start())
        if _password_like(value):
            return True
    return False


def _login_password_pair(views: Views) -> bool:
    for match in _EMAIL_PAIR.finditer(views.lower):
        password = match.group("password").rstrip(".)")
        if "@" in password or "/" in password or (password.isdigit() and len(password) < 6):
            continue  # another address, a path or a port
        value = _Value(password, stated=True, quoted=False, start=match.start("password"))
        if _strong(value):
            return True
    for match in (*_PAIR_WORDS.finditer(views.lower), *_LOGIN_WORDS.finditer(views.lower)):
        # The pair may follow an object: «доступ к роутеру admin / admin».
        pair = _PAIR.search(views.lower, match.end(), match.end() + 60)
        if pair is None or re.search(r"[.!?;]\s", views.lower[match.end() : pair.start()]):
            continue
        if match.re is _LOGIN_WORDS and pair.start() != match.end():
            continue
        login, text = pair.group(1), pair.group(2).rstrip(".,;)")
        password = _Value(text, stated=True, quoted=False, start=0)
        # "admin/admin", "i.petrov / Zaq12wsx": not "read/write".
        login_like = text == login or bool(re.search(r"[\d._@]", login))
        if len(text) >= 4 and (_strong(password) or (login_like and _password_shape(password))):
            return True
    return False


# "api key is 3fa9…", "secret: hunter2", "токен: abc123". Strong words name nothing but a
# credential; weak ones have everyday senses too ("Ключ: под ковриком", "Secret: surprises"),
# so their value must also look like one (a digit or a symbol).
_KEY_WORDS = _words(
    r"(?<!\w)(?:(?P<strong>api[\s_-]?key|secret[\s_-]?key|private[\s_-]?key|"
    r"(?:api|app|application|client)[\s_-]?secret|pat|personal\s+access\s+token|"
    r"приватник\w*|приватн\w*\s+ключ\w*|"
    r"(?:access|auth|bearer|api|refresh)[\s_-]?token|client[\s_-]?secret|ключ\w*\s+api|"
    r"api[\s-]?ключ\w*|секретн\w*\s+ключ\w*|токен\w*\s+доступа)|"
    r"(?P<weak>secret|token|key|ключ|токен|секрет))(?!\w)"
)


_REFERENCE = re.compile(r"[a-z]+:\d+")


def _key_in_words(views: Views) -> bool:
    for match, value in _named_values(_KEY_WORDS, views, max_object_words=2):
        if _is_placeholder(value.text):
            continue
        if not value.stated:
            # "API key 72ff90bc22189a14…": a strong word needs no connector before a real key.
            if match.group("strong") and _key_like(value):
                return True
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
    r"(?<!\w)(?:cvv-?код\w*|cvv2?|cvc2?|cvn|csc|pin(?:[\s-]*code)?|пин(?:[\s-]*код\w*)?|"
    r"puk\d?(?:[\s-]*code)?|пук\w*)(?!\w)"
)
_ONE_TIME_CODE_WORDS = _words(
    r"(?<!\w)(?:one[\s-]?time\s+(?:pass)?code|one[\s-]?time\s+password|otp(?:\s+code)?|totp|"
    r"(?:2fa|sms|verification|confirmation|security|login|sign[\s-]?in|auth(?:entication)?)"
    r"[\s-]+code|code\s+from\s+(?:the\s+|an?\s+)?(?:sms|text(?:\s+message)?|message)|"
    r"код\w*\s+из\s+(?:смс|sms|сообщения)|(?:смс|sms)[\s-]*код\w*|"
    r"код\w*\s+(?:подтверждения|верификации|для\s+входа|2fa)|одноразов\w*\s+(?:код\w*|пароль)|"
    r"проверочн\w*\s+код\w*|(?:backup|recovery|guard)\s+(?:2fa\s+|mfa\s+)?codes?|"
    r"резервн\w*\s+код\w*|(?:pickup|collection|locker|parcel)\s+code|steam\s+guard|"
    r"authenticator(?:\s+(?:app|code))?|аутентификатор\w*|puk[\s-]*код\w*|пук[\s-]*код\w*|"
    r"код\w*\s+(?:получения|выдачи|для\s+получения)|"
    r"(?:safe|lock|locker|padlock)\s+combination|combination\s+(?:to|for|of)\s+(?:the\s+|my\s+)?"
    r"(?:safe|lock|locker|padlock)|комбинаци\w*\s+(?:от\s+|для\s+|к\s+)?(?:сейф\w*|замк\w*))(?!\w)"
)
_CODE_DIGITS = re.compile(r"\d(?:[ \-#*]?\d){2,7}")


# A bare "code" / «код» with digits after it ("code: 553201", «Код 4821 от Сбера», «код для
# Госуслуг 123456»), unless the word before says what kind of public code it is.
_BARE_CODE_WORDS = _words(r"(?<![\w-])(?:code|kod|код(?:ом|а|у)?)(?!\w)")
_PUBLIC_CODES = frozenset(
    fold(word)
    for word in """
    zip post postal area country region promo discount coupon voucher error status exit source
    qr bar dress morse colour color product item hs iso airport airline flight booking tax
    referral invite invitation fare class
    промо почтовый региона города страны товара ошибки скидочный
    """.split()
)


def _code_named(
    words: re.Pattern[str], min_digits: int, public: frozenset[str] = frozenset()
) -> Callable[[Views], bool]:
    """A code named as such ("PIN: 4921", «код из СМС 482 913»): digits, maybe in groups."""

    def found(views: Views) -> bool:
        if not public:
            # «код подтверждения госуслуг 620418», "steam guard code R7K2P": a word or two on.
            for match in words.finditer(views.lower):
                for value in _values_soon(views.lower, match.end(), words=5):
                    digits = _CODE_DIGITS.match(views.lower, value.start)
                    count = len(re.sub(r"\D", "", digits.group(0))) if digits else 0
                    if _code_like(views.lower, value) and (
                        count >= min_digits or not value.text.isdigit()
                    ):
                        return True
        for match, value in _named_values(words, views):
            before = views.lower[max(0, match.start() - 20) : match.start()].split()
            if public and before and before[-1].strip(".,:;()") in public:
                continue
            digits = _CODE_DIGITS.match(views.lower, value.start)
            if (
                digits is not None
                and not views.lower[digits.end() : digits.end() + 1].isalnum()
                and len(re.sub(r"\D", "", digits.group(0))) >= min_digits
                # a bare «код 2024» is more often a year than a code
                and not (public and _is_year(digits.group(0)))
            ):
                return True
        return False

    return found


# --- named, then given further on in the sentence ----------------------------------------------
# "Password for the Synology NAS admin panel: GcjrWN#l1EP", "VPN password was reset this
# morning; the new one is UcpzV3JZ!e", «Код подтверждения от Wildberries для получения заказа —
# 8842», «Токен Vercel для деплоя из GitHub Actions: F6gDufF6SG4J…»: more words about the secret
# than an object, then a connector, then the value. The value must then look like one by itself.

_SENTENCE_END = re.compile(r"(?<!\.)[.!?](?!\.)(?:\s|$)|\n")
_FURTHER_CONNECTOR = _words(r"(?:[:=—–→]|->|=>|(?<!\w)(?:is|it'?s|now|to|теперь|это|на)(?!\w))\s*")
_CODE_NAME = _words(r"code|код|pin|пин")
#: How far after the name a connector may come.
FURTHER_WINDOW = 120
_DOMAIN = re.compile(r"[\w-]+(?:\.[\w-]+)+")
_VERSION = re.compile(r"v?\d+(?:[.:/-]\d+)+[a-z]?")
_MODEL = re.compile(r"[^\W\d_]+\d{1,2}|\d[^\W\d_]+")  # "win10", "iphone15", "1password"


def _values_further(lower: str, end: int) -> Iterator[_Value]:
    """Each value given after a connector in the rest of the sentence after ``end`` (not right
    after the name)."""
    stop = _SENTENCE_END.search(lower, end)
    limit = min(stop.start() if stop else len(lower), end + FURTHER_WINDOW)
    for connector in _FURTHER_CONNECTOR.finditer(lower, end, limit):
        if not lower[end : connector.start()].strip() and connector.group(0).strip() in _CONNECTORS:
            continue  # right after the name: the rules above read that value
        if connector.end() < len(lower):
            value = _read_value(lower, connector.end(), stated=True)
            if value is not None:
                yield value


def _password_like(value: _Value) -> bool:
    """Looks like a password by itself: six or more characters, letters with digits or
    symbols, and not an address, a domain, a date, a version or a model's name."""
    text = value.text.strip("()[]")
    if _is_placeholder(text) or not 6 <= len(text) <= 64:
        return False
    if value.quoted:
        return not _is_descriptive(text.split()[0])
    if re.search(r"://|@|^[/~]", text) or _DOMAIN.fullmatch(text) or _VERSION.fullmatch(text):
        return False
    letters, digits = re.search(r"[^\W\d_]", text), re.search(r"\d", text)
    symbols = re.search(r"[^\w\s.\-'’]", text)
    return bool(letters and (digits or symbols)) and not _MODEL.fullmatch(text)


def _random_letters(text: str, value: _Value) -> bool:
    """Letters alone, but in both cases at random ("sLHIfiOSYAvJ"), read from the text as written
    (the value's place in the lower-case view is its place there too)."""
    written = text[value.start : value.start + len(value.text)]
    upper = sum(char.isupper() for char in written)
    lower = sum(char.islower() for char in written)
    changes = sum(a.isupper() != b.isupper() for a, b in pairwise(written))
    return written.isalpha() and len(written) >= 8 and upper >= 3 and lower >= 3 and changes >= 4


def _code_like(lower: str, value: _Value) -> bool:
    """A code: four to eight digits, maybe in groups ("640 118", "4821-9930") and not a year
    or a time, or a short run of letters with digits ("K7RTX")."""
    digits = _CODE_DIGITS.match(lower, value.start)
    if digits is not None:
        count = len(re.sub(r"\D", "", digits.group(0)))
        after = lower[digits.end() : digits.end() + 1]
        return 4 <= count <= 8 and not _is_year(digits.group(0)) and not after.isalpha()
    text = value.text
    if re.fullmatch(r"[a-z]{1,3}-\d{4,8}", text):
        return True  # "G-583017"
    return bool(re.fullmatch(r"[a-z0-9]{4,10}", text)) and _has_digit_and_letter(text)


def _key_like(value: _Value) -> bool:
    """A key or token by itself: sixteen or more random-looking letters and digits."""
    text = value.text
    if PUBLISHABLE.match(text):
        return False
    return (
        len(text) >= 16
        and _has_digit_and_letter(text)
        and not _is_placeholder(text)
        and _entropy(text) >= 3.0
        and not _UUID.fullmatch(text)
    )


# "Greenhouse2019! — that's the login password", «ЗелёныйКот_77 это пароль от госуслуг»: the
# value first, then a connector and, a few words on, the name.
_VALUE_BEFORE = _words(
    r"(?:^|[.!?;]\s+)(?:[^.!?;]{0,40}?\s)?"
    r"(?P<value>[^\s\"'«»“”]+|[\"'«“][^\"'»”]+[\"'»”])\s*"
    r"(?:[—–=:-]|->|→|is|was|as|это|как)\s*(?:that'?s\s+|this\s+is\s+|it'?s\s+)?"
    r"(?P<between>(?:\S+\s+){0,2})$"
)


_ABOUT = frozenset(
    fold(word)
    for word in "about for on of re regarding with про о об обо по для от к на в с со".split()
)
_TOLD_AFTER = _words(r"\s*(?:[:=—–]|is\b|was\b|are\b|это\b|-\s)")


def value_before(lower: str, start: int) -> _Value | None:
    """The value a sentence gives before the name that starts at ``start``, if any."""
    found = _VALUE_BEFORE.search(lower, max(0, start - 80), start)
    # «BACK-2291 — про форму сброса пароля»: the name in a phrase about something else.
    if found is None or set(found.group("between").split()) & _ABOUT:
        return None
    text = found.group("value")
    quoted = text[0] in _QUOTES
    return _Value(text.strip(_QUOTES), True, quoted, found.start("value") + quoted)


def _named_further(views: Views) -> bool:
    lower = views.lower
    for match in _PASSWORD_WORDS.finditer(lower):
        code = _CODE_NAME.search(match.group(0))
        if _names_no_value(lower, match):
            continue
        before = value_before(lower, match.start())
        # "…: that's the login password for the portal", not "RT-AC68U — the password is on
        # the sticker" (there the sentence says what the password is, further on).
        told = _TOLD_AFTER.match(lower, match.end())
        if (
            before is not None
            and told is None
            and (_password_like(before) or _random_letters(views.text, before))
        ):
            return True
        for value in _values_further(lower, match.end()):
            if _password_like(value) or (code and _code_like(lower, value)):
                return True
        # «Код от калитки на даче 1945»: a door's or gate's code may look like a year, unless a
        # word before it makes it one ("changed in 2019", «с 2019»).
        for value in _values_soon(lower, match.end(), words=4) if code else ():
            previous = lower[: value.start].split()[-1:]
            if re.fullmatch(r"\d{4,8}", value.text) and previous[0] not in _BEFORE_A_YEAR:
                return True
    # "the code to my laptop is 7731hunter": a bare code's object, then the value.
    for match in _BARE_CODE_WORDS.finditer(lower):
        kind = lower[max(0, match.start() - 20) : match.start()].split()
        if kind and kind[-1].strip(".,:;()") in _PUBLIC_CODES:
            continue
        following = lower[match.end() : match.end() + 12].split()
        if not following or following[0] not in _OBJECT_PREPOSITIONS:
            continue
        for value in _values_further(lower, match.end()):
            if _password_like(value) or _code_like(lower, value):
                return True
    for words in (_ONE_TIME_CODE_WORDS, _CARD_CODE_WORDS):
        for match in words.finditer(lower):
            if any(_code_like(lower, value) for value in _values_further(lower, match.end())):
                return True
    for match in _KEY_WORDS.finditer(lower):
        if any(_key_like(value) for value in _values_further(lower, match.end())):
            return True
        # «ключ амплитуды 5bcd0a2b…», "project token 156d7b31-…": a long key a few words on.
        for value in _values_soon(lower, match.end(), words=4):
            if _key_like(value) and len(value.text) >= 20:
                return True
            named = match.group("strong") or match.group("weak") in ("token", fold("токен"))
            if named and _UUID.fullmatch(value.text):
                return True
    return False


_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_OPENING = re.compile(r"\s*[(\[]?")
_WORD = re.compile(r"\S+")


def _values_soon(lower: str, end: int, words: int = 3) -> Iterator[_Value]:
    """The next few words after ``end`` as values, within the sentence."""
    position = end
    for _ in range(words):
        position = _OPENING.match(lower, position).end()  # type: ignore[union-attr]
        if position >= len(lower) or _SENTENCE_END.match(lower, position):
            return
        value = _read_value(lower, position, stated=False)
        if value is None:
            return
        yield replace(value, text=value.text.strip("()[]"))
        word_end = _WORD.match(lower, position)
        position = word_end.end() if word_end else len(lower)


# The text of a Wi-Fi QR code: "WIFI:T:WPA;S:Grandma_Home;P:pierogi1948;;".
_WIFI_QR = re.compile(r"(?i)WIFI:(?:[A-Z]:[^;]*;)*?P:(?!;)(?P<password>[^;]+);")


def _wifi_qr(views: Views) -> bool:
    return any(not _is_placeholder(m.group("password")) for m in _WIFI_QR.finditer(views.text))


# "The keypad on the front door opens with 8264", "He set the hotel room safe to 9142", «сейф
# открывается кодом 2-7-4-1»: a lock named, and what opens it.
_LOCK_THEN_CODE = _words(
    r"(?<!\w)(?:keypad|door|gate|safe|lock|padlock|locker|сейф\w*|двер\w*|калитк\w*|замок|"
    r"замк\w*|ворот\w*)(?!\w)[^.!?\n]{0,30}?(?:opens?\s+with|set\s+to|to|with|is|:|—|"
    r"открыва\w*(?:\s+кодом)?|кодом|код\w*)\s+(?P<code>\d(?:[ \-#*]?\d){2,7})(?![\w])"
)


def _code_by_its_lock(views: Views) -> bool:
    return any(not _is_year(m.group("code")) for m in _LOCK_THEN_CODE.finditer(views.lower))


# Google's verification codes are sent as "G-583017".
_GOOGLE_CODE = re.compile(r"(?<![\w-])G-\d{6}(?!\d)")


DETECTORS: tuple[Detector, ...] = (
    Detector("password_in_words", gettext_noop("a password"), _password_in_words),
    Detector("key_in_words", _PASSWORD_OR_KEY, _key_in_words),
    Detector("card_code_or_pin", _CODE, _code_named(_CARD_CODE_WORDS, min_digits=3)),
    Detector("one_time_code", _CODE, _code_named(_ONE_TIME_CODE_WORDS, min_digits=4)),
    Detector(
        "code_named",
        _CODE,
        _code_named(_BARE_CODE_WORDS, min_digits=4, public=_PUBLIC_CODES),
    ),
    Detector("login_password_pair", gettext_noop("a password"), _login_password_pair),
    Detector("network_key", gettext_noop("a password"), _network_key),
    Detector("named_further", _PASSWORD_OR_KEY, _named_further),
    Detector("joined_pair", gettext_noop("a password"), _joined_pair),
    Detector("google_code", _CODE, lambda views: bool(_GOOGLE_CODE.search(views.text))),
    Detector("wifi_qr", gettext_noop("a password"), _wifi_qr),
    Detector("code_by_its_lock", _CODE, _code_by_its_lock),
)
