"""The optimizer pays for likely duplicates only: unchanged notes are not sent,
only candidate groups are, in calls of bounded size; good merges still get through."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest

from agent_memory.embeddings import get_embedder, note_text
from agent_memory.notes import Note
from agent_memory.optimizer.candidates import (
    candidate_groups,
    fingerprint,
    message_chars,
    pack_calls,
)
from agent_memory.optimizer.proposer import SYSTEM_PROMPT
from benchmarks.search_corpus import OTHERS, TARGETS
from tests import scripted_model
from tests.merge_corpus import CASES
from tests.scripted_model import groups

NOW = datetime(2030, 1, 1, tzinfo=UTC)


def note(note_id, content, categories=("General",), version=1):
    categories = (categories,) if isinstance(categories, str) else tuple(categories)
    return Note(note_id, 1, categories, content, version, "agent", NOW, NOW)


def vectors_of(notes):
    embedder = get_embedder()
    if embedder is None:
        return None
    matrix = np.asarray(embedder.embed([note_text(item) for item in notes]), dtype=np.float32)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def test_fingerprint_changes_with_any_id_or_version_not_with_order():
    a, b = note(1, "Likes tea"), note(2, "Lives in Riga")
    assert fingerprint([a, b]) == fingerprint([b, a])
    assert fingerprint([a, b]) != fingerprint([a, note(2, "Lives in Riga", version=2)])
    assert fingerprint([a, b]) != fingerprint([a])


@pytest.mark.parametrize("with_vectors", [True, False], ids=["embeddings", "stems"])
def test_alike_notes_form_groups_and_unrelated_ones_stay_out(with_vectors, settings):
    notes = [
        note(1, "Likes green tea"),
        note(2, "Lives in Riga"),
        note(3, "Likes green tea in the morning"),
        note(4, "Plays the cello"),
        note(5, "Не любит острое"),
        note(6, "Совсем не любит острую еду"),
    ]
    if not with_vectors:
        settings.AGENT_MEMORY = {"EMBEDDINGS": False}
    found = candidate_groups(notes, vectors_of(notes))
    assert [[item.id for item in group] for group in found] == [[1, 3], [5, 6]]


def test_calls_stay_within_the_character_budget_and_keep_groups_whole():
    found = [
        [note(n, f"Note {n} about topic {n // 2} " + "x" * 80) for n in (i, i + 1)]
        for i in range(1, 40, 2)
    ]
    budget = message_chars(found[0]) + 600
    calls = pack_calls(found, budget)
    assert len(calls) > 1
    assert all(message_chars(call) <= budget for call in calls)
    assert sorted(item.id for call in calls for item in call) == list(range(1, 41))
    for group in found:
        assert any({item.id for item in group} <= {item.id for item in call} for call in calls)


def test_a_group_too_big_for_one_call_is_split_into_parts_that_fit():
    group = [note(n, f"Likes tea, variant {n} " + "y" * 200) for n in range(1, 21)]
    budget = message_chars(group[:4])
    calls = pack_calls([group], budget)
    assert all(message_chars(call) <= budget for call in calls)
    assert all(len(call) >= 2 for call in calls)


def test_good_merges_of_the_corpus_land_in_one_group_among_unrelated_notes():
    background = [
        note(1000 + index, content, categories)
        for index, (categories, content) in enumerate(
            [(t.categories, t.content) for t in TARGETS] + list(OTHERS)
        )
    ][:180]
    background_vectors = vectors_of(background)
    good = [case for case in CASES if case.good]
    together = 0
    for case in good:
        sources = [note(i, text, cats) for i, (cats, text) in enumerate(case.sources, start=1)]
        own = vectors_of(sources)
        vectors = None if own is None else np.vstack([own, background_vectors])
        found = candidate_groups(sources + background, vectors)
        together += any({1, 2} <= {item.id for item in group} for group in found)
    assert together / len(good) >= 0.9
    sent = sum(len(group) for group in candidate_groups(background, background_vectors))
    assert sent <= 0.15 * len(background), "unrelated notes are mostly left out"


# --- through the runner ----------------------------------------------------------------------


@pytest.fixture
def model(settings):
    def script(*answers, **options):
        settings.AGENT_MEMORY = {
            "MODELS": {"default": scripted_model.configure("candidates", *answers)},
            "OPTIMIZER": {"interval_hours": 24, **options},
        }

    return script


def items(*texts):
    return [{"categories": ["General"], "content": text} for text in texts]


def test_unrelated_notes_are_not_sent_and_the_run_succeeds(memory, person, model):
    memory.create_notes(person, items("Likes tea", "Lives in Riga", "Plays the cello"))
    model()  # no answer scripted: asking the model would fail the run
    result = memory.optimize(person, force=True)
    assert (result.status, result.applied) == ("succeeded", 0)


def test_only_candidate_notes_are_sent_and_unchanged_notes_not_again(memory, person, model):
    tea, _, morning, _ = memory.create_notes(
        person,
        items(
            "Likes green tea",
            "Lives in Riga",
            "Likes green tea in the morning",
            "Plays the cello",
        ),
    )
    shown = []

    def answer(notes):
        shown.append(sorted(item["id"] for item in notes))
        return groups()

    model(answer, answer)
    assert memory.optimize(person, force=True).status == "succeeded"
    assert shown == [[tea.id, morning.id]]
    assert memory.optimize(person, force=True).status == "succeeded"
    assert len(shown) == 1, "notes unchanged since the last success are not sent again"
    memory.create_notes(person, items("Has a cat"))
    assert memory.optimize(person, force=True).status == "succeeded"
    assert shown == [[tea.id, morning.id]] * 2


def test_many_candidate_groups_are_split_over_calls_under_the_budget(memory, person, model):
    pairs = [
        ("Likes green tea", "Likes green tea in the morning"),
        ("Lives in Riga", "Lives in Riga since 2020"),
        ("Plays the cello", "Plays the cello in an orchestra"),
        ("Has a cat named Tom", "Has a cat, Tom"),
        ("Works at Acme", "Works at Acme as a designer"),
        ("Runs on Sundays", "Runs every Sunday"),
    ]
    for first, second in pairs:
        memory.create_notes(person, items(first, second))
    sizes = []

    def answer(notes):
        sizes.append(len(notes))
        return groups()

    budget = len(SYSTEM_PROMPT) + 400  # room for about two pairs per call
    model(*[answer] * 6, max_call_chars=budget)
    assert memory.optimize(person, force=True).status == "succeeded"
    assert len(sizes) > 1 and sum(sizes) == 12
    sent = [message for message in scripted_model.CALLS[-len(sizes) :]]
    assert all(sum(len(m["content"]) for m in call) <= budget for call in sent)
