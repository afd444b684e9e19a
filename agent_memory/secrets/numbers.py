"""Numbers with a checksum: payment cards and IBANs."""

from __future__ import annotations

import re

from django.utils.translation import gettext_noop

from .base import _CARD, _IBAN, Detector
from .normal import Views, fold

# A phone's IMEI (Luhn-checked too) or a device's serial number, named in the words before.
_IMEI = re.compile(r"(?i)\b(?:imei|serial)\b")
# A number said to be a ticket, an order or a parcel (of which one in ten is Luhn-valid too).
_NAMED_ELSE = re.compile(
    fold(
        r"(?i)(?:ticket|order|tracking|invoice|parcel|shipment|booking|barcode|ean|upc|билет|"
        r"заказ|трек|накладн|посылк|брон|штрихкод|штрих-код)\w*(?:\s+\S+){0,3}\W*$"
    )
)
_CARD_WORD = re.compile(fold(r"(?i)card|карт|visa|mastercard|мир\b"))
# Not inside a word: the digits of a hexadecimal address or hash are no card.
_DIGIT_RUN = re.compile(r"(?<![\w.,])\d(?:[ .\-]?\d)*(?!\w)")


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


def _card_shaped(digits: str) -> bool:
    """Starts as the networks' cards do (2–6: Mir, Amex, Visa, Mastercard, Discover, UnionPay)
    and has a card's length (15, 16 or 19)."""
    return digits[0] in "23456" and len(digits) in (15, 16, 19)


def _card_number(views: Views) -> bool:
    """13 to 19 Luhn-valid digits, plain or in groups of 3 to 6 ("4111.1111.1111.1111")."""
    text = views.text
    for match in _DIGIT_RUN.finditer(text):
        # "+86 138 0013 8002": an international phone number; cards are never written with "+".
        # A phone's IMEI is Luhn-checked too.
        before = text[max(0, match.start() - 60) : match.start()].rstrip()
        if before.endswith("+") or _IMEI.search(before[-50:]):
            continue
        named_else = _NAMED_ELSE.search(before[-40:]) and not _CARD_WORD.search(before[-40:])
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
                # a ticket's or an order's number, unless it has a card's own shape
                and not (named_else and not _card_shaped(digits))
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


def aba_valid(digits: str) -> bool:
    """The checksum of a US bank routing number (nine digits, weights 3, 7, 1)."""
    if len(digits) != 9 or not digits.isdigit():
        return False
    return sum(int(digit) * (3, 7, 1)[place % 3] for place, digit in enumerate(digits)) % 10 == 0


# A US account with its routing number (nine digits with their checksum), as an IBAN is
# elsewhere: the two together are what a payment needs.
_ROUTING = re.compile(
    r"(?i)\b(?:routing|aba|rtn)(?:\s+(?:number|no\.?|#))?\s*[:#]?\s*(?P<routing>\d{9})\b"
    r"[^.\n]{0,40}?\b(?:account|acct|a/c)(?:\s+(?:number|no\.?|#))?\s*[:#]?\s*\d{6,17}\b"
)


def _bank_account(views: Views) -> bool:
    return any(aba_valid(match.group("routing")) for match in _ROUTING.finditer(views.text))


DETECTORS: tuple[Detector, ...] = (
    Detector("card_number", _CARD, _card_number),
    Detector("iban", _IBAN, _iban),
    Detector("bank_account", gettext_noop("a bank account number"), _bank_account),
)
