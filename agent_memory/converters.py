"""Path converters for the app's URLconfs.

``<memory_id:note_id>`` matches a note or merge run id written in ASCII digits that fits the
database's key (:func:`~agent_memory.rules.parse_id`); anything else (``²``, ``٣``, ``-1``,
``memory:5``, a number with 30 digits) matches no address, so the answer is a 404, never a 500.
"""

from __future__ import annotations

from django.urls import register_converter

from .rules import parse_id


class IdConverter:
    regex = "[0-9]{1,19}"

    def to_python(self, value: str) -> int:
        number = parse_id(value)
        if number is None:
            raise ValueError(f"not an id: {value!r}")  # Django reads this as "no match"
        return number

    def to_url(self, value: int | str) -> str:
        number = parse_id(value)
        if number is None:
            raise ValueError(f"not an id: {value!r}")
        return str(number)


register_converter(IdConverter, "memory_id")
