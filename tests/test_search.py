"""Search: word stems in Russian and English, ranked, counted, limited, isolated."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.test import override_settings

from agent_memory import LongTermMemory
from agent_memory.errors import InvalidNote
from agent_memory.notes import Note
from agent_memory.search import (
    CALIBRATED_FLOORS,
    DEFAULT_MODEL,
    Floor,
    meaning_floor,
    query_language,
    search_notes,
    stems,
)
from agent_memory.stores.in_memory import InMemoryStore

START = datetime(2025, 1, 1, tzinfo=UTC)


def notes(*texts: str | tuple[str, tuple[str, ...]]) -> list[Note]:
    """Notes with ids 1, 2, …; the first is the most recently changed, as stores list them."""
    made = []
    for index, text in enumerate(texts):
        content, categories = text if isinstance(text, tuple) else (text, ("General",))
        made.append(
            Note(
                id=index + 1,
                user_id=1,
                categories=categories,
                content=content,
                version=1,
                source="agent",
                created_at=START,
                updated_at=START - timedelta(minutes=index),
            )
        )
    return made


def found(query: str, items: list[Note], limit: int = 10) -> list[str]:
    return [note.content for note in search_notes(items, query, limit).notes]


# --- matching -------------------------------------------------------------------------------


def test_russian_word_forms_match_by_stem():
    items = notes("Любит зелёный чай без сахара", "Работает до шести часов")
    assert found("чаю", items) == ["Любит зелёный чай без сахара"]
    assert found("ЧАЕМ", items) == ["Любит зелёный чай без сахара"]
    assert found("часы", items) == ["Работает до шести часов"]


def test_english_word_forms_match_by_stem():
    items = notes("Prefers aisle seats on flights", "Runs every morning")
    assert found("flight seat", items) == ["Prefers aisle seats on flights"]
    assert found("running", items) == ["Runs every morning"]


def test_search_is_case_insensitive_and_folds_yo():
    items = notes("Ставит ЁЛКУ в декабре", "Uses PostgreSQL at work")
    assert found("елка", items) == ["Ставит ЁЛКУ в декабре"]
    assert found("postgresql", items) == ["Uses PostgreSQL at work"]


def test_a_query_word_matches_the_start_of_a_longer_word():
    items = notes("Uses PostgreSQL 16 at work", "Uses MySQL")
    assert found("postgres", items) == ["Uses PostgreSQL 16 at work"]


def test_categories_are_searched_too():
    items = notes(("Window seat, please", ("Travel",)), ("Likes tea", ("Food",)))
    assert found("travel", items) == ["Window seat, please"]


def test_query_without_matches_finds_nothing():
    result = search_notes(notes("Likes tea"), "quantum chromodynamics", 10)
    assert (result.notes, result.total) == ([], 0)


def test_stop_words_do_not_match_everything():
    items = notes("Likes tea", "The cat is black", "Has a dog")
    assert found("the tea", items) == ["Likes tea"]
    assert found("и чай", notes("Любит чай", "Кот и собака")) == ["Любит чай"]


def test_stems_helper():
    assert stems("Чаю, flights!") == ["ча", "flight"]


# --- ranking ------------------------------------------------------------------------------------


def test_a_word_match_needs_every_meaningful_word_of_the_query():
    items = notes("Likes tea", "Window seat on long flights", "Books flights early")
    assert found("flight seat", items) == ["Window seat on long flights"]
    assert found("xyzzy nothing", notes("Nothing with nuts", "Likes tea")) == []
    # Stop words are not needed: "where does he work" asks for "work".
    assert found("where does he work", notes("Works at Acme", "Likes tea")) == ["Works at Acme"]


def test_equally_relevant_notes_come_most_recently_changed_first():
    texts = ["Drinks tea at noon", "Tea with lemon", "Green tea in the morning"]
    items = notes(*texts)
    assert found("tea", items) == texts
    assert found("tea", items[::-1]) == found("tea", items)[::-1]


def test_exact_stem_ranks_above_a_prefix_match():
    items = notes("Uses PostgreSQL daily", "Postgres fan")
    assert found("postgres", items) == ["Postgres fan", "Uses PostgreSQL daily"]


def test_category_hit_ranks_above_a_text_only_hit():
    items = notes(("Mentions travel once", ("Misc",)), ("Aisle seat", ("Travel",)))
    assert found("travel", items) == ["Aisle seat", "Mentions travel once"]


# --- meaning: the relevance floor -------------------------------------------------------------


def test_meaning_finds_nothing_when_the_best_match_is_below_the_floor():
    items = notes("Likes tea", "Lives in Riga", "Has a dog")
    result = search_notes(items, "submarine", 10, similarities=[0.22, 0.2, 0.1], floor=0.23)
    assert (result.notes, result.total) == ([], 0)


def test_above_the_floor_the_notes_near_the_best_match_are_found_and_counted():
    items = notes("Likes tea", "Lives in Riga", "Has a dog", "Plays chess")
    result = search_notes(items, "pets", 10, similarities=[0.3, 0.05, 0.4, 0.26], floor=0.23)
    # 0.4 reaches the floor; 0.3 and 0.26 are within 0.15 of it; 0.05 is not.
    assert [note.content for note in result.notes] == ["Has a dog", "Likes tea", "Plays chess"]
    assert result.total == 3


def test_query_language_goes_by_the_letters_most_of_the_query_is_written_in():
    assert query_language("кот") == "ru"
    assert query_language("пишет на python") == "ru"
    assert query_language("VS Code редактор") == "ru"
    assert query_language("boss") == "en"
    assert query_language("Python и Go") == "en"
    assert query_language("2027") == "en"


class _Model:
    def __init__(self, name: str, similarity_floor: float = 0.3) -> None:
        self.name = name
        self.similarity_floor = similarity_floor


def test_the_floor_is_calibrated_per_model_name_and_query_language():
    default = _Model(DEFAULT_MODEL, 0.175)
    assert meaning_floor(default, "boss") == CALIBRATED_FLOORS[DEFAULT_MODEL]["en"]
    assert meaning_floor(default, "кот") == CALIBRATED_FLOORS[DEFAULT_MODEL]["ru"]
    assert meaning_floor(default, "кот").weights is not None
    # A model not calibrated uses its backend's floor; one set in OPTIONS wins over calibration.
    assert meaning_floor(_Model("other", 0.4), "кот") == Floor(0.4)
    assert meaning_floor(default, "кот", {"similarity_floor": 0.5}) == Floor(0.175)
    assert meaning_floor(None, "кот") == Floor(0.3)


def test_each_search_logs_ids_scores_and_the_floor_but_never_note_text(caplog):
    items = notes("Secret diagnosis here", "Lives in Riga", "Has a dog")
    with caplog.at_level("DEBUG", logger="agent_memory"):
        result = search_notes(items, "riga", 10, similarities=[0.1, 0.5, 0.4], floor=0.23)
    assert [note.id for note in result.notes] == [2, 3]
    (line,) = [record.getMessage() for record in caplog.records if record.name == "agent_memory"]
    assert "floor=0.230" in line and "cutoff=0.350" in line
    assert "2:words=1,meaning=0.500" in line
    assert "1:words=0,meaning=0.100" in line
    assert "returned=[2, 3] total=2" in line
    for note in items:
        assert note.content not in line
    assert "riga" not in line.casefold()


# --- total, limit, memory:<id> --------------------------------------------------------------


def test_total_counts_every_match_and_at_most_limit_are_returned():
    items = notes(*[f"Tea note number {i}" for i in range(15)], "Coffee")
    result = search_notes(items, "tea", 10)
    assert result.total == 15
    assert len(result.notes) == 10
    assert [note.id for note in result.notes] == list(range(1, 11))


def test_memory_key_finds_that_note():
    items = notes("Likes tea", "Lives in Riga", "Has a dog")
    result = search_notes(items, "memory:2", 10)
    assert ([note.content for note in result.notes], result.total) == (["Lives in Riga"], 1)
    assert found(" Memory:3 ", items) == ["Has a dog"]
    assert search_notes(items, "memory:99", 10).total == 0


def test_result_as_dict_has_notes_and_total():
    result = search_notes(notes("Likes tea"), "tea", 10)
    assert result.as_dict() == {"notes": [result.notes[0].as_dict()], "total": 1}


# --- through LongTermMemory, on the real stores ------------------------------------------------


def test_search_limit_setting_caps_the_notes_and_total_counts_all(memory, people):
    ann, _ = people
    memory.create_notes(ann, [{"categories": ["Food"], "content": f"Tea {i}"} for i in range(5)])
    with override_settings(AGENT_MEMORY={"SEARCH_LIMIT": 3}):
        result = memory.search(ann, "tea")
    assert (len(result.notes), result.total) == (3, 5)
    assert len(memory.search(ann, "tea").notes) == 5


def test_recency_breaks_ties_with_real_updates(memory, people):
    ann, _ = people
    first, second = memory.create_notes(
        ann,
        [
            {"categories": ["Food"], "content": "Tea in the morning"},
            {"categories": ["Food"], "content": "Tea with lemon"},
        ],
    )
    memory.update_note(ann, first.id, 1, ["Food"], "Tea in the evening")
    assert [note.id for note in memory.search(ann, "tea").notes] == [first.id, second.id]
    memory.update_note(ann, second.id, 1, ["Food"], "Tea with honey")
    assert [note.id for note in memory.search(ann, "tea").notes] == [second.id, first.id]


def test_another_persons_notes_are_never_found(memory, people):
    ann, bob = people
    (anns,) = memory.create_notes(ann, [{"categories": ["Food"], "content": "Любит чай"}])
    memory.create_notes(bob, [{"categories": ["Food"], "content": "Не любит чай"}])
    for query in ["чай", "food", anns.key, "любит"]:
        result = memory.search(bob, query)
        assert anns.id not in [note.id for note in result.notes]
        assert result.total == (0 if query == anns.key else 1)
    assert memory.search(ann, anns.key).notes[0].id == anns.id


def test_python_api_caps_the_query_like_the_tool():
    # 200,000 words used to be ranked for seconds; a query is a few words.
    memory = LongTermMemory(store=InMemoryStore(), optimizer=False)
    memory.create_notes(1, [{"categories": ["Food"], "content": "Likes tea"}])
    assert memory.search(1, "tea " * 125).total == 1  # 500 characters
    with pytest.raises(InvalidNote) as refused:
        memory.search(1, "tea " * 200_000)
    assert refused.value.message == (
        "query is 800000 characters long; search with a few words (at most 500 characters)."
    )
    answer = memory.call_tool(1, {"action": "search", "query": "tea " * 200})
    assert answer["error"] == {
        "kind": "invalid",
        "message": refused.value.message.replace("800000", "800"),
    }
