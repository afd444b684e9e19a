"""Government identity numbers named as such: passport series and number, SSN, national
insurance number, driving licence, tax number, СНИЛС and a person's ИНН.

A number counts only after the word that names it ("passport 4510 123456", «СНИЛС 112-233-445
95»), with nothing but filler words between ("number", "series", «серия», «номер», "my"), or a
few words and then a connector («Загранпаспорт Оли: 75 4829163», «ИНН ИП Серёжи — 7848…»), so
"Passport expires 2030-05-17" and «Паспорт выдан в 2015 году» pass. A СНИЛС written in its own
shape with a valid checksum counts unnamed too. An ИНН of ten digits belongs to an organisation
(people's have twelve) and is public, so it passes.
"""

from __future__ import annotations

import re

from django.utils.translation import gettext_noop

from .base import Detector
from .normal import Views, _words, fold

_IDENTITY = gettext_noop("a government identity number")

_FILLERS = frozenset(
    fold(word)
    for word in """
    no nr num number numbers series serial id is my his her the of and card # № : - — – = , . ( )
    серия серии серию номер номера и мой моя мои его её ее это рф ru uk us usa
    паспорта паспортные данные физлица физического лица личный
    """.split()
)
_TOKEN = re.compile(r"\d+|[^\W\d]+|[^\w\s]")


#: A few words about the number's owner, then a connector: «Оли:», "for her studio LLC:".
_WORDS_THEN_CONNECTOR = re.compile(
    r"(?:\s*,?\s*[^\W\d]+[.'’]?(?:s\b)?){1,6}\s*(?:[:—–=]|\([^)]{0,30}\)\s*:?)"
)


def _number_after(lower: str, end: int, letters: bool = False) -> str | None:
    """The digits given after a name that ends at ``end``: right after it, fillers skipped, or
    after a few words and a connector; ``None`` if anything else (a verb, a date) comes first.
    With ``letters``, a leading letter pair counts too ("AB1234567")."""
    number = _number_at(lower, end, letters)
    if number is None:
        connector = _WORDS_THEN_CONNECTOR.match(lower, end)
        if connector is not None:
            number = _number_at(lower, connector.end(), letters)
    return number


def _number_at(lower: str, end: int, letters: bool = False) -> str | None:
    collected: list[str] = []
    first = last = end
    for token in _TOKEN.finditer(lower, end, min(len(lower), end + 80)):
        word = token.group(0)
        if word.isdigit() or (
            letters and not collected and word.isalpha() and len(word) <= 2 and word.isascii()
        ):
            if not collected:
                first = token.start()
            collected.append(word)
            last = token.end()
        elif collected and word in (".", "/") and lower[token.end() : token.end() + 1].isdigit():
            return None  # a date ("12.05.2030", "05/17") or a fraction
        elif word in _FILLERS:
            continue
        elif collected:
            break
        else:
            return None
    if _DATE.search(lower, first, last):
        return None
    return "".join(collected) or None


_DATE = re.compile(r"(?<!\d)(?:\d{4}-\d\d-\d\d|\d\d-\d\d-\d{4})(?!\d)")


_PASSPORT_WORDS = _words(r"(?<!\w)(?:passport|паспорт\w*|загранпаспорт\w*|загран)(?!\w)")


#: "500341727086 — это ИНН жены": the number first, then a connector and the name.
_NUMBER_BEFORE = _words(
    r"(?:^|[.!?;]\s+)(\d(?:[\s-]?\d){5,19})\s*(?:[—–=:-]|это|is)\s*(?:\S+\s+){0,2}$"
)


def _number_before(lower: str, start: int) -> str | None:
    found = _NUMBER_BEFORE.search(lower, max(0, start - 60), start)
    return re.sub(r"\D", "", found.group(1)) if found else None


def _passport(views: Views) -> bool:
    for match in _PASSPORT_WORDS.finditer(views.lower):
        number = _number_after(views.lower, match.end(), letters=True)
        if number is not None and 6 <= sum(char.isdigit() for char in number) <= 12:
            return True
        if _id_after(views.lower, match.end()):  # "French passport number is 19AV48213"
            return True
    return False


_SSN_WORDS = _words(
    r"(?<!\w)(?:ssn|social\s+security(?:\s+number)?|soc\.?\s*sec\.?(?:\s+number)?)(?!\w)"
)


def _ssn(views: Views) -> bool:
    for match in _SSN_WORDS.finditer(views.lower):
        number = _number_after(views.lower, match.end())
        if number is None or len(number) != 9:
            continue
        area, group, serial = number[:3], number[3:5], number[5:]
        if area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000":
            return True
    return False


_NINO_WORDS = _words(
    r"(?<!\w)(?:national\s+insurance(?:\s+number)?|ni\s+(?:number|no)|nino|nin)(?!\w)"
)
_NINO_LEAD = re.compile(r"(?:[\s:.,\-—=#]|number|no|is|my)*")
_NINO = re.compile(r"[a-z]{2}\s?\d{2}\s?\d{2}\s?\d{2}\s?[a-d]\b")


def _national_insurance(views: Views) -> bool:
    for match in _NINO_WORDS.finditer(views.lower):
        after = views.lower[match.end() : match.end() + 40]
        words = _NINO_LEAD.match(after)
        if words is not None and _NINO.match(after, words.end()):
            return True
    return False


def snils_valid(digits: str) -> bool:
    """The СНИЛС checksum: the last two digits from the first nine."""
    if len(digits) != 11 or not digits.isdigit():
        return False
    total = sum(
        int(digit) * weight for digit, weight in zip(digits[:9], range(9, 0, -1), strict=True)
    )
    check = total % 101 if total > 100 else total
    return f"{0 if check == 100 else check:02d}" == digits[9:]


_SNILS_WORDS = _words(r"(?<!\w)(?:снилс\w*|страхов\w*\s+номер\w*|snils)(?!\w)")
_SNILS_SHAPE = re.compile(r"(?<![\d-])\d{3}-\d{3}-\d{3}[ -]\d{2}(?![\d-])")


def _snils(views: Views) -> bool:
    for match in _SNILS_WORDS.finditer(views.lower):
        number = _number_after(views.lower, match.end())
        if number is not None and len(number) == 11:
            return True
    return any(
        snils_valid(re.sub(r"\D", "", m.group(0))) for m in _SNILS_SHAPE.finditer(views.text)
    )


_INN_WORDS = _words(r"(?<!\w)(?:инн|inn)(?!\w)")


def _personal_inn(views: Views) -> bool:
    for match in _INN_WORDS.finditer(views.lower):
        for number in (
            _number_after(views.lower, match.end()),
            _number_before(views.lower, match.start()),
        ):
            if number is not None and len(number) == 12:
                return True
    return False


_LICENCE_WORDS = _words(
    r"(?<!\w)(?:driv(?:er'?s?|ing)\s+licen[cs]e|водительск\w*\s+(?:удостоверени\w*|прав\w*)|"
    r"прав[аy]?(?=\s*[:—–-]?\s*\d{2}\s?\d{2}\s?\d{6}(?!\w))|dl(?=\s*[:#]?\s*[a-z]?\d{5}))(?!\w)"
)
# A licence number: ten digits in groups (Russia's «99 21 457813») or letters with five or more
# digits ("D4827193", Britain's "MORGA753116SM9IJ").
_LICENCE_NUMBER = re.compile(r"\d{2}\s?\d{2}\s?\d{6}(?!\w)|[a-z0-9]{6,20}(?!\w)")


_LICENCE_FILLERS = re.compile(r"(?:\s|[:#№=\-—–]|\b(?:number|no|nr|is|номер|серия)\b)*")


def _starts_after(lower: str, end: int, fillers: re.Pattern[str]) -> list[int]:
    """Where a number may start after a name that ends at ``end``: past the fillers right
    after it, and past a few words and a connector («Загранпаспорт Оли: …»)."""
    starts = [fillers.match(lower, end).end()]  # type: ignore[union-attr]
    connector = _WORDS_THEN_CONNECTOR.match(lower, end)
    if connector is not None:
        starts.append(fillers.match(lower, connector.end()).end())  # type: ignore[union-attr]
    return starts


def _driving_licence(views: Views) -> bool:
    lower = views.lower
    for match in _LICENCE_WORDS.finditer(lower):
        for start in _starts_after(lower, match.end(), _LICENCE_FILLERS):
            number = _LICENCE_NUMBER.match(lower, start)
            if number is not None and sum(char.isdigit() for char in number.group(0)) >= 5:
                return True
    return False


# Other countries' identity numbers and the documents that carry one: a number of six or more
# digits (a letter or two beside them allowed: "25046881L", "A204718339") right after the name,
# fillers skipped, or a few words and a connector on.
_NATIONAL_ID_WORDS = _words(
    r"(?<!\w)(?:dni|nie|nif|nir|pesel|bsn|cpr|personnummer|codice\s+fiscale|"
    r"national\s+id(?:entity)?(?:\s+(?:number|card))?|(?:id|identity)\s+card(?:\s+number)?|"
    r"residence\s+permit|green\s+card|uscis|alien\s+(?:registration\s+)?number|a-number|"
    r"nhs\s+(?:no|number)|medicare\s+(?:no|number|card)|health\s+insurance\s+number|"
    r"полис\w*\s+омс|омс|иин|вид\w*\s+на\s+жительство|внж|рвп|"
    r"удостоверени\w*\s+личност\w*|id-?карт\w*|pan\s+(?:card|no|number)|aadhaa?r|"
    r"personal\s+(?:id\s+)?number|личн\w*\s+номер\w*|social\s+insurance\s+(?:number|no)|"
    r"sin(?=[^.\n]{0,30}?\d{3}[\s-]?\d{3}[\s-]?\d{3}(?!\d)))(?!\w)"
)
# Whose document it is, then a long number: «Загранпаспорт сына 75 № 4821937».
_OWNER_THEN_NUMBER = _words(
    r"(?:\s+[^\W\d]+){1,2}\s+(?P<number>\d{2}\s?(?:(?:№|no)\.?\s?)?\d{6,7}|\d{8,12})(?!\w)"
)
# Digits, maybe in groups and between a letter or two ("X-4829173-R", "A204718339"), or a code of
# letters and digits ("L7K4M9R23", India's PAN "AKRPM4821L").
_ID_NUMBER = re.compile(
    r"(?:[a-z]{0,2}-?\d(?:[\s-]?\d){5,19}-?[a-z]?|(?=[a-z]*\d)(?=\d*[a-z])[a-z0-9]{8,12})(?!\w)"
)
_ID_FILLERS = _words(
    r"(?:[\s:#№=\-—–.,]|\([^)]{0,30}\)|\b(?:number|no|nr|is|in\s+\w+|номер|серия|рф|\w+стан\w*)\b)*"
)


def _id_after(lower: str, end: int) -> bool:
    """Whether an identity number follows a document's name that ends at ``end``."""
    for start in _starts_after(lower, end, _ID_FILLERS):
        number = _ID_NUMBER.match(lower, start)
        if number is not None and not _DATE.search(lower, start, number.end()):
            return True
    # «Загранпаспорт сына 75 № 4821937»: whose it is, then a long number.
    owner = _OWNER_THEN_NUMBER.match(lower, end)
    if owner is not None and len(re.sub(r"\D", "", owner.group("number"))) >= 8:
        return True
    # «серия 82, номер 1597364»: the digits in parts, with their names between.
    digits = _number_after(lower, end)
    return digits is not None and len(digits) >= 6


def _national_id(views: Views) -> bool:
    return any(_id_after(views.lower, m.end()) for m in _NATIONAL_ID_WORDS.finditer(views.lower))


_TAX_WORDS = _words(
    r"(?<!\w)(?:itin|tin|tax\s+id(?:entification)?(?:\s+number)?|tax\s+number|"
    r"taxpayer\s+id\w*|steuer-?id|steuernummer|steueridentifikationsnummer)(?!\w)"
)


def _tax_number(views: Views) -> bool:
    for match in _TAX_WORDS.finditer(views.lower):
        number = _number_after(views.lower, match.end())
        if number is not None and 9 <= len(number) <= 11:
            return True
    return False


DETECTORS: tuple[Detector, ...] = (
    Detector("passport_number", _IDENTITY, _passport),
    Detector("driving_licence", _IDENTITY, _driving_licence),
    Detector("tax_number", _IDENTITY, _tax_number),
    Detector("national_id", _IDENTITY, _national_id),
    Detector("ssn", _IDENTITY, _ssn),
    Detector("national_insurance_number", _IDENTITY, _national_insurance),
    Detector("snils", _IDENTITY, _snils),
    Detector("personal_inn", _IDENTITY, _personal_inn),
)
