"""The checker against the labelled corpus (tests/merge_corpus.py) and rule by rule."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from agent_memory.notes import Note
from agent_memory.optimizer.checker import check_groups
from agent_memory.optimizer.details import lost_details, proper_names
from agent_memory.optimizer.polarity import polarity_problem
from tests.merge_corpus import CASES, Case

NOW = datetime(2030, 1, 1, tzinfo=UTC)


def note(note_id: int, categories: str | tuple[str, ...], content: str) -> Note:
    categories = (categories,) if isinstance(categories, str) else categories
    return Note(note_id, 1, tuple(categories), content, 1, "agent", NOW, NOW)


def judge(case: Case):
    notes = [note(i, cats, text) for i, (cats, text) in enumerate(case.sources, start=1)]
    others = [
        note(len(notes) + i, cats, text) for i, (cats, text) in enumerate(case.others, start=1)
    ]
    ids = [f"memory:{item.id}" for item in notes]
    if case.repeat_first:
        ids = [ids[0], ids[0]]
    ids += [f"memory:{foreign}" for foreign in case.foreign_ids]
    proposal = {"ids": ids, "categories": list(case.categories), "content": case.content}
    (verdict,) = check_groups([proposal], notes + others)
    return verdict


def test_corpus_is_big_enough_and_balanced():
    assert len(CASES) >= 80
    by_lang = {lang: [case for case in CASES if case.lang == lang] for lang in ("ru", "en")}
    assert len(by_lang["ru"]) == len(by_lang["en"])
    for cases in by_lang.values():
        assert any(case.good for case in cases) and any(not case.good for case in cases)


def test_no_bad_merge_is_accepted_and_most_good_ones_are(capsys):
    accepted_bad = []
    refused_good = []
    for case in CASES:
        verdict = judge(case)
        if verdict.accepted and not case.good:
            accepted_bad.append((case.lang, case.why, case.content))
        if case.good and not verdict.accepted:
            refused_good.append((case.lang, case.content, verdict.reason))
    good = [case for case in CASES if case.good]
    share = (len(good) - len(refused_good)) / len(good)
    with capsys.disabled():
        print(
            f"\nmerge corpus: {len(CASES)} proposals ({sum(c.lang == 'ru' for c in CASES)} ru, "
            f"{sum(c.lang == 'en' for c in CASES)} en); bad accepted: {len(accepted_bad)} of "
            f"{len(CASES) - len(good)}; good accepted: {len(good) - len(refused_good)} of "
            f"{len(good)} = {share:.0%}"
        )
        for lang, content, reason in refused_good:
            print(f"  refused good [{lang}] {content!r}: {reason}")
    assert accepted_bad == []
    assert share >= 0.8


@pytest.mark.parametrize("case", [case for case in CASES if not case.good], ids=lambda c: c.why)
def test_each_bad_merge_is_rejected_with_a_reason(case):
    verdict = judge(case)
    assert not verdict.accepted
    assert verdict.reason and verdict.code


def test_a_note_named_by_two_groups_rejects_both():
    notes = [note(1, "Food", "Likes tea"), note(2, "Food", "Likes tea a lot"), note(3, "Food", "x")]
    verdicts = check_groups(
        [
            {"ids": [1, 2], "categories": ["Food"], "content": "Likes tea a lot"},
            {"ids": ["memory:2", "memory:3"], "categories": ["Food"], "content": "x, tea a lot"},
        ],
        notes,
    )
    assert [verdict.code for verdict in verdicts] == ["overlap", "overlap"]
    assert "memory:2" in verdicts[0].reason


@pytest.mark.parametrize(
    "groups",
    [
        [{"ids": ["memory:9999", "memory:1"], "categories": ["Food"], "content": "Likes tea"}],
        # Named twice: still an unknown note, not "in more than one group".
        [
            {"ids": ["memory:9999", "memory:1"], "categories": ["Food"], "content": "Likes tea"},
            {"ids": ["memory:9999", "memory:2"], "categories": ["Food"], "content": "Likes tea"},
        ],
    ],
    ids=["once", "in-two-groups"],
)
def test_an_unknown_note_id_has_its_own_code(groups):
    notes = [note(1, "Food", "Likes tea"), note(2, "Food", "Likes tea a lot")]
    verdicts = check_groups(groups, notes)
    assert {verdict.code for verdict in verdicts} == {"unknown_note"}
    assert all("memory:9999" in verdict.reason for verdict in verdicts)
    assert all("memory:1 " not in verdict.reason for verdict in verdicts)


def test_an_unknown_note_beside_a_real_overlap_is_told_apart():
    notes = [note(1, "Food", "Likes tea"), note(2, "Food", "Likes tea a lot")]
    verdicts = check_groups(
        [
            {"ids": ["memory:9999", "memory:1"], "categories": ["Food"], "content": "Likes tea"},
            {"ids": [1, 2], "categories": ["Food"], "content": "Likes tea a lot"},
        ],
        notes,
    )
    assert [verdict.code for verdict in verdicts] == ["unknown_note", "overlap"]


@pytest.mark.parametrize(
    "proposal",
    [
        "not a dict",
        {"ids": "1,2", "categories": ["Food"], "content": "x"},
        {"ids": [1, "two"], "categories": ["Food"], "content": "x"},
        {"ids": [1, 2], "categories": "Food", "content": "Likes tea a lot"},
        {"ids": [1, 2], "categories": ["Food"], "content": ""},
        {"ids": [1, 2], "categories": ["Food"], "content": "Likes tea a lot " * 40},
    ],
)
def test_malformed_or_invalid_groups_are_rejected_with_a_reason(proposal):
    notes = [note(1, "Food", "Likes tea"), note(2, "Food", "Likes tea a lot")]
    (verdict,) = check_groups([proposal], notes)
    assert not verdict.accepted and verdict.reason


def test_accepted_group_becomes_a_merge_note_with_cleaned_fields():
    notes = [note(1, "Food", "Likes tea"), note(2, ("Food", "Drinks"), "Likes tea a lot")]
    (verdict,) = check_groups(
        [{"ids": ["memory:1", 2], "categories": [" Drinks "], "content": " Likes tea a lot "}],
        notes,
    )
    assert verdict.accepted
    assert verdict.ids == (1, 2)
    assert (verdict.note.categories, verdict.note.content, verdict.note.source) == (
        ("Drinks",),
        "Likes tea a lot",
        "merge",
    )


def test_categories_are_compared_case_insensitively():
    notes = [note(1, "Food", "Likes tea"), note(2, "Food", "Likes tea a lot")]
    (verdict,) = check_groups(
        [{"ids": [1, 2], "categories": ["food"], "content": "Likes tea a lot"}], notes
    )
    assert verdict.accepted


@pytest.mark.parametrize(
    ("sources", "merged", "lost"),
    [
        (["Call at 10:30"], "Call at 10", ["30"]),
        (["Write to a@b.io"], "Write to her", ["a@b.io"]),
        (["Docs at https://x.dev/docs"], "Docs online", ["x.dev/docs"]),
        (["Meet Anna on 5 June"], "Meet on 5 June", ["Anna"]),
        (["Встреча с Анной 5 июня"], "Встреча с Анной 5 июля", ["июня"]),
        (["Встреча с Анной 5 июня"], "Встреча 5 июня", ["Анной"]),
        (["Alarm at 6 am"], "Alarm at 6 pm", ["6:00am"]),
    ],
)
def test_lost_details_finds_what_is_missing(sources, merged, lost):
    assert lost_details(sources, merged) == lost


def test_inflected_russian_names_and_possessives_are_kept():
    assert lost_details(["Сестра Маша живёт в Казани"], "У Маши, сестры, дом в Казани") == []
    assert lost_details(["Tom's car is red"], "Tom drives a red car") == []


def test_proper_names_skip_common_sentence_openers():
    assert proper_names("Likes tea. Lives in Riga with Tom.") == ["Riga", "Tom"]
    assert proper_names("Работает в Яндексе. Любит Python.") == ["Яндексе", "Python"]


@pytest.mark.parametrize(
    ("sources", "merged"),
    [
        (["Doesn't like coffee", "Likes coffee with milk"], "Likes coffee with milk"),
        (["Не любит кофе", "Любит кофе с молоком"], "Любит кофе с молоком"),
        (["Doesn't like coffee", "Doesn't like coffee at all"], "Likes coffee"),
        (["Не любит кофе", "Совсем не любит кофе"], "Любит кофе"),
        (["Likes tea", "Loves tea"], "Doesn't like tea"),
        (["Любит чай", "Обожает чай"], "Не любит чай"),
        (["Doesn't drive", "Does not drive a car"], "Drives a car, doesn't fly"),
    ],
)
def test_polarity_problems_are_found(sources, merged):
    assert polarity_problem(sources, merged)


@pytest.mark.parametrize(
    ("sources", "merged"),
    [
        (["Doesn't like coffee", "Does not like coffee at all"], "Doesn't like coffee at all"),
        (["Не любит кофе", "Кофе не любит"], "Не любит кофе"),
        (["Vegetarian", "Doesn't eat meat"], "Vegetarian, doesn't eat meat"),
        (["Uses pnpm, not npm", "Don't suggest npm"], "Uses pnpm; don't suggest npm"),
    ],
)
def test_same_polarity_merges_pass(sources, merged):
    assert polarity_problem(sources, merged) is None


@pytest.mark.parametrize(
    "text",
    [
        "Prefers tea over coffee, usually green tea without sugar.",
        "Предпочитает чай кофе, обычно зелёный чай без сахара.",
        "Likes tea, but not green tea.",
    ],
)
def test_identical_copies_under_two_categories_merge(text):
    notes = [note(1, "Food", text), note(2, "Drinks", text.lower().rstrip("."))]
    (verdict,) = check_groups(
        [{"ids": [1, 2], "categories": ["Food", "Drinks"], "content": text}], notes
    )
    assert verdict.accepted, verdict.reason


@pytest.mark.parametrize("ids", [[1], [1, 1], ["memory:1", "1"]])
def test_a_merge_of_one_note_is_refused_as_too_few(ids):
    notes = [note(1, "Food", "Likes tea"), note(2, "Food", "Works at Acme")]
    (verdict,) = check_groups([{"ids": ids, "categories": ["Food"], "content": "Likes tea"}], notes)
    assert not verdict.accepted
    assert verdict.code == "too_few"


def test_a_merge_may_take_only_its_sources_categories_not_another_notes():
    notes = [
        note(1, "Food", "Likes green tea"),
        note(2, "Food", "Likes green tea a lot"),
        note(3, "Work", "Works at Acme"),
    ]
    merged = {"ids": ["memory:1", "memory:2"], "content": "Likes green tea a lot"}
    (taken,) = check_groups([{**merged, "categories": ["Food"]}], notes)
    (borrowed,) = check_groups([{**merged, "categories": ["Food", "Work"]}], notes)
    assert taken.accepted
    assert not borrowed.accepted and borrowed.code == "categories" and "Work" in borrowed.reason
