"""The note rules: validation with messages that say what to fix, and duplicates."""

from __future__ import annotations

import re
import unicodedata
from datetime import UTC, datetime

import pytest

from agent_memory import rules
from agent_memory.conf import Limits
from agent_memory.errors import DuplicateNote, InvalidNote
from agent_memory.notes import NewNote, Note, newest_first
from agent_memory.rules import (
    check_create,
    check_update,
    clean_batch,
    clean_categories,
    clean_content,
    clean_id,
    clean_note,
    clean_version,
    find_duplicate,
    is_duplicate,
    parse_note_id,
    text_key,
)

LIMITS = Limits(
    max_notes=200, max_total_chars=48_000, max_batch=5, max_block_chars=12_000, search_limit=10
)
NOW = datetime(2025, 1, 1, tzinfo=UTC)


def note(note_id: int, content: str, *categories: str) -> Note:
    return Note(
        id=note_id,
        user_id=1,
        categories=categories or ("General",),
        content=content,
        version=1,
        source="agent",
        created_at=NOW,
        updated_at=NOW,
    )


def new(content: str, *categories: str) -> NewNote:
    return NewNote(categories=categories or ("General",), content=content)


# --- categories ---------------------------------------------------------------------------


def test_categories_are_stripped():
    assert clean_categories(["  Travel ", "\tFood\n"]) == ("Travel", "Food")


@pytest.mark.parametrize("count", [1, 2, 3])
def test_one_to_three_categories_pass(count):
    names = ["One", "Two", "Three"][:count]
    assert clean_categories(names) == tuple(names)


@pytest.mark.parametrize("names", [[], ["A", "B", "C", "D"]])
def test_zero_or_four_categories_are_invalid(names):
    with pytest.raises(InvalidNote, match="1 to 3 categories; got") as refused:
        clean_categories(names)
    assert refused.value.kind == "invalid"


def test_category_of_60_characters_passes_and_61_is_invalid():
    assert clean_categories(["x" * 60]) == ("x" * 60,)
    assert clean_categories(["  " + "x" * 60 + "  "]) == ("x" * 60,)
    with pytest.raises(InvalidNote, match="61 characters long; shorten it to 60 or fewer"):
        clean_categories(["x" * 61])


@pytest.mark.parametrize("blank", ["", "   ", "\n"])
def test_empty_category_is_invalid(blank):
    with pytest.raises(InvalidNote, match="A category is empty"):
        clean_categories(["Travel", blank])


def test_category_with_a_slash_is_invalid_and_says_to_split_it():
    with pytest.raises(InvalidNote, match='contains "/"; use separate categories'):
        clean_categories(["Work/Tools"])


def test_categories_equal_ignoring_case_are_invalid():
    with pytest.raises(InvalidNote, match='"Travel" and "travel" are the same'):
        clean_categories(["Travel", " travel "])


@pytest.mark.parametrize("value", ["Travel", None, 3, {"Travel": 1}])
def test_categories_must_be_a_list(value):
    with pytest.raises(InvalidNote, match="categories must be a list of 1 to 3 names"):
        clean_categories(value)


def test_every_category_must_be_text():
    with pytest.raises(InvalidNote, match="Every category must be text"):
        clean_categories(["Travel", 7])


# --- content -------------------------------------------------------------------------------


def test_content_is_stripped():
    assert clean_content("  Likes tea \n") == "Likes tea"


def test_content_of_500_characters_passes_and_501_is_invalid():
    assert clean_content("y" * 500) == "y" * 500
    assert clean_content("\n " + "y" * 500 + " \n") == "y" * 500
    with pytest.raises(InvalidNote, match="501 characters long; the limit is 500"):
        clean_content("y" * 501)


@pytest.mark.parametrize("blank", ["", "  ", "\n\t"])
def test_empty_content_is_invalid(blank):
    with pytest.raises(InvalidNote, match="content is empty"):
        clean_content(blank)


@pytest.mark.parametrize("value", [None, 5, ["Likes tea"]])
def test_content_must_be_text(value):
    with pytest.raises(InvalidNote, match="content must be the note's text"):
        clean_content(value)


@pytest.mark.parametrize("bad", ["\x00", "\x07", "\x1b", "\ud800"])
def test_unprintable_characters_are_invalid_in_content_and_categories(bad):
    # PostgreSQL cannot store NUL at all; the others are never meant as note text.
    code = f"U\\+{ord(bad):04X}"
    with pytest.raises(InvalidNote, match=f"unprintable character {code} at position 6; remove"):
        clean_content(f"Likes{bad} tea")
    with pytest.raises(InvalidNote, match="A category contains the unprintable character"):
        clean_categories([f"Food{bad}"])


BIDI_CONTROLS = [
    "\u202a",
    "\u202b",
    "\u202c",
    "\u202d",
    "\u202e",
    "\u2066",
    "\u2067",
    "\u2068",
    "\u2069",
    "\u200e",
    "\u200f",
    "\u061c",
]


@pytest.mark.parametrize("bad", BIDI_CONTROLS, ids=[f"U+{ord(c):04X}" for c in BIDI_CONTROLS])
def test_text_direction_controls_are_refused_saying_which_and_where(bad):
    # "Likes ‮aet‬" would show as "Likes tea" reversed: the note must read as it is stored.
    code = f"U+{ord(bad):04X}"
    with pytest.raises(InvalidNote) as refused:
        clean_content(f"  Likes {bad}aet")
    assert refused.value.message == (
        f"content contains the invisible text-direction character {code} "
        f"({unicodedata.name(bad)}) at position 9; remove it and send plain text."
    )
    with pytest.raises(InvalidNote, match=f"A category contains .*{re.escape(code)}.*position 3"):
        clean_categories([f"Fo{bad}od"])


def test_zero_width_joiners_stay_allowed_in_emoji():
    family = "Family: \U0001f468\u200d\U0001f469\u200d\U0001f467"
    assert clean_content(family) == family


def test_line_breaks_and_tabs_are_fine_in_content_but_not_in_categories():
    assert clean_content("Likes:\n- tea\t(green)\r\n- cats") == "Likes:\n- tea\t(green)\r\n- cats"
    with pytest.raises(InvalidNote, match="U\\+000A"):
        clean_categories(["Food\nDrinks"])


def test_clean_note_returns_the_cleaned_note_with_its_source():
    assert clean_note([" Food "], " Likes tea ", "person") == NewNote(
        categories=("Food",), content="Likes tea", source="person"
    )


# --- duplicates -----------------------------------------------------------------------------


def test_text_key_folds_case_and_runs_of_whitespace():
    assert text_key("  Likes\tGreen   TEA\n") == "likes green tea"
    assert text_key("Straße") == text_key("STRASSE")


def test_same_text_in_a_shared_category_is_a_duplicate_ignoring_case_and_spaces():
    existing = [note(7, "Likes green tea", "Food", "Drinks")]
    found = find_duplicate(["drinks ", "Mornings"], "  likes   GREEN tea ", existing)
    assert found == existing[0]


def test_same_text_without_a_shared_category_is_not_a_duplicate():
    existing = [note(7, "Likes green tea", "Food")]
    assert find_duplicate(["Drinks"], "Likes green tea", existing) is None
    check_create(existing, [new("Likes green tea", "Drinks")], LIMITS)


def test_different_text_in_the_same_category_is_not_a_duplicate():
    assert not is_duplicate(["Food"], "Likes black tea", note(1, "Likes green tea", "Food"))


def test_duplicate_on_create_names_the_note_to_update_instead():
    existing = [note(12, "Likes green tea", "Food")]
    with pytest.raises(DuplicateNote) as refused:
        check_create(existing, [new("likes green tea", "FOOD")], LIMITS)
    assert refused.value.kind == "duplicate"
    assert refused.value.existing_id == 12
    assert "already saved as memory:12" in refused.value.message
    assert "Update memory:12 instead" in refused.value.message


def test_duplicate_within_one_batch_is_refused():
    batch = [new("Likes tea", "Food"), new("Lives in Riga", "Home"), new("LIKES  tea", "food")]
    with pytest.raises(DuplicateNote, match="Notes 1 and 3 of this batch have the same text"):
        check_create([], batch, LIMITS)


def test_same_text_in_one_batch_under_other_categories_is_allowed():
    check_create([], [new("Likes tea", "Food"), new("Likes tea", "Mornings")], LIMITS)


def test_update_to_its_own_text_is_not_a_duplicate():
    current = note(3, "Likes tea", "Food")
    check_update([current], current, new("  LIKES tea ", "Food"), LIMITS)


def test_update_to_another_notes_text_in_a_shared_category_is_a_duplicate():
    current, other = note(3, "Likes coffee", "Food"), note(4, "Likes tea", "Food")
    with pytest.raises(DuplicateNote, match="memory:4"):
        check_update([current, other], current, new("likes tea", "Food", "Mornings"), LIMITS)
    # Moving it out of the shared category makes the same text fine.
    check_update([current, other], current, new("likes tea", "Mornings"), LIMITS)


# --- ids and ordering -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (12, 12),
        ("12", 12),
        ("memory:12", 12),
        (" memory:12 ", 12),
        (0, None),
        (-3, None),
        (True, None),
        ("memory:", None),
        ("twelve", None),
        ("١٢", None),  # non-ASCII digits
        (None, None),
        (12.0, None),
    ],
)
def test_note_ids_are_read_as_number_or_memory_key(value, expected):
    assert parse_note_id(value) == expected


def test_newest_first_orders_by_change_then_id():
    later = datetime(2025, 2, 1, tzinfo=UTC)
    a, b = note(1, "a"), note(2, "b")
    c = Note(**{**note(3, "c").__dict__, "updated_at": later})
    assert newest_first([a, c, b]) == [c, b, a]


def test_note_key_and_shape():
    item = note(5, "Likes tea", "Food")
    assert item.key == "memory:5"
    assert item.as_dict() == {
        "id": 5,
        "version": 1,
        "categories": ["Food"],
        "content": "Likes tea",
        "updated_at": NOW.isoformat(),
        "source": "agent",
        "created_by": "agent",
        "valid_until": None,
        "pinned": False,
    }


def test_ids_and_versions_are_cleaned_or_refused_with_where_to_find_them():
    assert clean_id("memory:12") == clean_id(" 12 ") == clean_id(12) == 12
    assert clean_version("3") == clean_version(3) == 3
    with pytest.raises(InvalidNote, match="memory block or in search results"):
        clean_id("memory:x")
    with pytest.raises(InvalidNote, match="current version"):
        clean_version("memory:3")


def test_a_batch_is_cleaned_note_by_note_with_its_origin():
    cleaned = clean_batch(
        [{"categories": ["Food"], "content": "Likes tea."}], LIMITS, "person", " chat:4 "
    )
    assert cleaned == [NewNote(("Food",), "Likes tea.", "person", "chat:4")]
    with pytest.raises(InvalidNote, match="must be a list"):
        clean_batch({"categories": ["Food"], "content": "Likes tea."}, LIMITS)
    with pytest.raises(InvalidNote) as raised:
        clean_batch([{"categories": ["Food"], "content": "Tea."}, {"content": "Tea."}], LIMITS)
    assert "2" in str(raised.value.message)


INVISIBLE = [
    "\u200b\u200b\u200b",  # zero-width spaces
    "\u200c\u200d\u2060\ufeff",  # joiners, word joiner, byte-order mark
    "\u00ad\u00ad",  # soft hyphens
    "\u3164\u3164",  # Hangul filler
    "\u2800",  # blank Braille pattern
    "\u0301\u0308",  # combining marks with nothing to combine with
    "\u200b \u3000 \u200b",  # and spaces between them
]


@pytest.mark.parametrize("text", INVISIBLE)
def test_content_made_only_of_invisible_characters_is_invalid(text):
    with pytest.raises(InvalidNote) as error:
        rules.clean_content(text)
    assert error.value.code == "content_invisible"
    assert "invisible" in error.value.message


@pytest.mark.parametrize("text", INVISIBLE)
def test_a_category_made_only_of_invisible_characters_is_invalid(text):
    with pytest.raises(InvalidNote) as error:
        rules.clean_categories(["Food", text])
    assert error.value.code == "category_invisible"


@pytest.mark.parametrize("text", ["Likes tea\u200b", "❤️", "\u200bОК", "é", "\ue000 icon"])
def test_text_with_one_visible_character_is_kept(text):
    assert rules.clean_content(text) == text.strip()
    assert rules.clean_categories([text]) == (text.strip(),)
