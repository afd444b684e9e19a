"""One vocabulary of error codes: the rules raise members of ``ErrorCode``, the wording says
each of them in a person's words, and anything else is refused when raised."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.utils import translation

from agent_memory import rules
from agent_memory.conf import Limits
from agent_memory.errors import (
    AgentMemoryError,
    ErrorCode,
    InvalidNote,
    LimitReached,
    NoteNotFound,
    StaleVersion,
)
from agent_memory.notes import NewNote, Note
from agent_memory.wording import field_of, person_message

GENERIC = "This can’t be saved. Check the text and the categories, then try again."

#: Codes only the model or the host can cause (a call's shape, the agent's own limits, the
#: optimizer's lease) or that say no more than their kind: the screen never shows them with
#: words of their own.
NOT_FOR_A_PERSON = {
    ErrorCode.INVALID,
    ErrorCode.LIMIT_REACHED,
    ErrorCode.NOT_FOUND,
    ErrorCode.STALE_VERSION,
    ErrorCode.CONFLICT,
    ErrorCode.READ_ONLY,
    ErrorCode.DISABLED,
    ErrorCode.BUSY,
    ErrorCode.ID_SHAPE,
    ErrorCode.VERSION_SHAPE,
    ErrorCode.ORIGIN_SHAPE,
    ErrorCode.NOTES_SHAPE,
    ErrorCode.BATCH_SIZE,
    ErrorCode.PINNED_BY_AGENT,
    ErrorCode.PINNED_SHAPE,
    ErrorCode.ENABLED_SHAPE,
    ErrorCode.LEASE_EXPIRED,
}

#: The figures each code's words need, as the raise sites give them.
FIGURES: dict[ErrorCode, dict[str, object]] = {
    ErrorCode.CONTENT_TOO_LONG: {"length": 510, "max": 500},
    ErrorCode.CONTENT_UNPRINTABLE: {"character": "U+0000"},
    ErrorCode.SECRET: {"secret": "a password"},
    ErrorCode.CATEGORIES_COUNT: {"count": 4, "max": 3},
    ErrorCode.CATEGORY_SECRET: {"number": 1, "secret": "a password"},
    ErrorCode.CATEGORY_TOO_LONG: {"name": "A" * 40, "length": 61, "max": 60},
    ErrorCode.CATEGORY_UNPRINTABLE: {"character": "U+0000"},
    ErrorCode.CATEGORY_REPEATED: {"first": "Food", "second": "food"},
    ErrorCode.CATEGORY_INVISIBLE: {"number": 1},
    ErrorCode.TOO_MANY_NOTES: {"count": 200, "limit": 200, "added": 1},
    ErrorCode.TOO_MANY_CHARS: {"count": 48_000, "limit": 48_000, "added": 10},
    ErrorCode.PINNED_TOO_LONG: {"count": 3_000, "limit": 2_000},
    ErrorCode.IMPORT_TOO_MANY_NOTES: {"added": 5, "free": 2, "count": 198, "limit": 200},
    ErrorCode.IMPORT_TOO_MANY_CHARS: {"added": 500, "free": 20, "count": 47_980, "limit": 48_000},
}


def test_a_code_that_is_not_a_member_is_refused_when_raised():
    with pytest.raises(TypeError, match="ErrorCode"):
        InvalidNote("Too long.", code="content_too_long")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="ErrorCode"):
        LimitReached("Full.", code="too_many_note", count=1, limit=1, added=1)  # type: ignore[arg-type]


def test_an_error_without_a_code_has_its_kinds():
    assert InvalidNote("x").code is ErrorCode.INVALID
    assert NoteNotFound.for_id(3).code is ErrorCode.NOT_FOUND
    assert StaleVersion.for_note(3, 1, 2).code is ErrorCode.STALE_VERSION
    for kind in {cls.kind for cls in AgentMemoryError.__subclasses__()}:
        assert ErrorCode(kind) == kind


def test_the_rules_raise_members_with_their_figures():
    with pytest.raises(InvalidNote) as refused:
        rules.clean_content("x" * 501)
    assert refused.value.code is ErrorCode.CONTENT_TOO_LONG
    assert refused.value.params == {"length": 501, "max": 500}
    with pytest.raises(InvalidNote) as refused:
        rules.clean_categories(["Food", "FOOD"])
    assert refused.value.code is ErrorCode.CATEGORY_REPEATED
    with pytest.raises(InvalidNote) as refused:
        rules.clean_id("twelve")
    assert refused.value.code is ErrorCode.ID_SHAPE


@pytest.mark.parametrize("code", sorted(set(ErrorCode) - NOT_FOR_A_PERSON))
def test_every_code_a_person_can_meet_has_words_of_its_own_in_both_languages(code):
    error = AgentMemoryError("for the model", code=code, **FIGURES.get(code, {}))
    english = person_message(error)
    assert english != GENERIC
    assert "%(" not in english
    with translation.override("ru"):
        russian = person_message(error)
    assert russian != english
    assert "%(" not in russian


def test_field_of_places_each_code_beside_its_field():
    assert field_of(InvalidNote("x", code=ErrorCode.SECRET)) == "content"
    assert field_of(InvalidNote("x", code=ErrorCode.CATEGORY_SLASH)) == "categories"
    assert field_of(InvalidNote("x", code=ErrorCode.VALID_UNTIL_PAST)) == "valid_until"
    assert field_of(InvalidNote("x", code=ErrorCode.IMPORT_EMPTY)) is None


def test_a_create_and_an_edit_past_the_characters_limit_say_the_same():
    limits = Limits(
        max_notes=10, max_total_chars=20, max_batch=5, max_block_chars=4000, search_limit=10
    )
    now = datetime(2030, 1, 1, tzinfo=UTC)
    note = Note(1, 1, ("Food",), "a" * 10, 1, "agent", now, now)
    saved = rules.NoteList([note])
    with pytest.raises(LimitReached) as on_create:
        rules.check_room(saved, 1, 11, limits)
    with pytest.raises(LimitReached) as on_edit:
        rules.check_update(saved, note, NewNote(("Food",), "b" * 21), limits)
    assert on_create.value.code is on_edit.value.code is ErrorCode.TOO_MANY_CHARS
    assert on_create.value.message == on_edit.value.message
    assert "10 of 20 characters are used and this adds 11" in on_edit.value.message
