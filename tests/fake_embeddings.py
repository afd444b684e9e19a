"""Embedding backends for tests: fast, deterministic, offline, and real vectors all the same.

:class:`StemEmbeddings` is the test settings' default ``EMBEDDINGS``. A text's vector is the sum
of signed hashed features, L2-normalised: each word's Snowball stem (the search's own stemmer,
stop words left out), the word's character trigrams (so "allergies" is near "allergic", a typo
near its word), and the concepts of a small thesaurus (:data:`CONCEPTS`: "job" near "works",
"кофе" near "coffee"), which stands in for what a trained model knows about meaning. Ranking,
similarity floors and merge candidates therefore behave as with a model, on the texts the tests
use, in microseconds and without loading any weights. The real models are tested in
``tests/test_models.py`` (marker ``models``) and measured in ``benchmarks/``.

:class:`SwitchableEmbeddings` is the same behind a switch that makes it fail:
``AGENT_MEMORY["EMBEDDINGS"] = fake_embeddings.config()``; ``STATE["failing"] = True`` makes every
call raise, and ``CALLS`` records the texts of each call with a snapshot of ``STATE["events"]``
taken then.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from typing import Any

import numpy as np

from agent_memory.search import stem, words

#: The dotted path of the default test backend, for settings.
BACKEND = "tests.fake_embeddings.StemEmbeddings"
DIMENSIONS = 256

#: Groups of words that mean related things, as a trained model would place them near each
#: other: English and Russian. A word belongs to a concept when its stem is listed (stems are
#: taken of the words below, so write plain words).
CONCEPTS: dict[str, tuple[str, ...]] = {
    "work": (
        "job work works worked working career employer employed company office designer "
        "engineer developer manager profession occupation colleague boss salary "
        "работа работает работаю должность профессия компания офис дизайнер инженер "
        "разработчик коллега начальник зарплата карьера"
    ).split(),
    "food": (
        "food foods eat eats eating meal meals dish cuisine diet peanut peanuts shellfish "
        "allergy allergies allergic lunch dinner breakfast cook cooking vegetarian vegan "
        "еда ест есть блюдо кухня диета арахис аллергия аллергии аллергик обед ужин завтрак "
        "готовит вегетарианец"
    ).split(),
    "drink": (
        "drink drinks drinking coffee tea cappuccino espresso latte juice beverage sugar milk "
        "пьёт пьет пить напиток кофе чай капучино эспрессо латте сок сахар молоко"
    ).split(),
    "pet": (
        "pet pets cat cats kitten dog dogs puppy animal animals "
        "питомец кот кошка котёнок собака пёс щенок животное"
    ).split(),
    "family": (
        "family wife husband daughter son child children kids kid mother father mom dad "
        "parent parents sister brother spouse married partner "
        "семья жена муж дочь сын ребёнок дети мама папа мать отец родители сестра брат "
        "замужем женат"
    ).split(),
    "home": (
        "live lives living home house flat apartment city town moved address "
        "живёт живет жить дом квартира город переехал адрес"
    ).split(),
    "travel": (
        "travel travels trip trips flight fly flies holiday vacation abroad visit visited "
        "путешествие поездка летает полёт отпуск отдых поехал"
    ).split(),
    "car": (
        "car cars drive drives driving vehicle volvo bmw toyota tesla bike bicycle "
        "машина автомобиль водит ездит велосипед"
    ).split(),
    "health": (
        "health medicine medication doctor ill illness sick disease hospital pill pills "
        "здоровье лекарство врач болезнь болеет больница таблетки"
    ).split(),
    "language": (
        "language languages speak speaks english russian german french spanish "
        "язык языки говорит английский русский немецкий французский испанский"
    ).split(),
    "music": (
        "music song songs band guitar piano sing sings concert "
        "музыка песня группа гитара пианино поёт концерт"
    ).split(),
    "sport": (
        "sport sports run runs running gym football tennis swim swims swimming yoga hike "
        "спорт бег бегает спортзал футбол теннис плавание плавает йога"
    ).split(),
    "name": ("name named called nickname зовут имя называют").split(),
    "birthday": ("birthday born age old anniversary день рождения родился лет возраст").split(),
    "reading": ("book books read reads reading novel author книга книги читает роман").split(),
}

_WEIGHTS = {"stem": 1.0, "gram": 0.35, "concept": 1.2}


@lru_cache(maxsize=1)
def _concept_of_stem() -> dict[str, tuple[str, ...]]:
    found: dict[str, list[str]] = {}
    for concept, members in CONCEPTS.items():
        for member in members:
            found.setdefault(stem(member.casefold()), []).append(concept)
    return {key: tuple(sorted(set(value))) for key, value in found.items()}


def _slot(feature: str) -> tuple[int, float]:
    digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
    number = int.from_bytes(digest, "little")
    return number % DIMENSIONS, 1.0 if (number >> 32) & 1 else -1.0


@lru_cache(maxsize=50_000)
def _word_vector(word: str) -> np.ndarray:
    """One word's features: its stem, its trigrams (sharing one weight), its concepts."""
    vector = np.zeros(DIMENSIONS, dtype=np.float64)
    word_stem = stem(word)
    index, sign = _slot(f"s:{word_stem}")
    vector[index] += sign * _WEIGHTS["stem"]
    padded = f"<{word}>"
    grams = [padded[i : i + 3] for i in range(len(padded) - 2)]
    for gram in grams:
        index, sign = _slot(f"g:{gram}")
        vector[index] += sign * _WEIGHTS["gram"] / len(grams) ** 0.5
    for concept in _concept_of_stem().get(word_stem, ()):
        index, sign = _slot(f"c:{concept}")
        vector[index] += sign * _WEIGHTS["concept"]
    return vector


def _text_words(text: str) -> list[str]:
    from agent_memory.search import _STOP_WORDS

    every = words(text)
    kept = [word for word in every if word not in _STOP_WORDS]
    return kept or every


def embed_text(text: str) -> list[float]:
    """The unit vector of ``text`` (all zeros but one fixed slot for a text with no words)."""
    vector = np.zeros(DIMENSIONS, dtype=np.float64)
    for word in _text_words(text):
        vector += _word_vector(word)
    norm = float(np.linalg.norm(vector))
    if norm == 0.0:
        vector[0], norm = 1.0, 1.0
    rows: list[float] = (vector / norm).astype(np.float32).tolist()
    return rows


class StemEmbeddings:
    """The fast deterministic backend (see the module's docstring).

    ``OPTIONS``: ``name`` (the model name stored with vectors), ``similarity_floor`` (0.2).
    """

    similarity_floor = 0.2

    def __init__(self, name: str = "test-stems/256", similarity_floor: float | None = None):
        self.name = name
        if similarity_floor is not None:
            self.similarity_floor = similarity_floor

    def embed(self, texts: list[str]) -> list[list[float]]:
        USED.append(len(texts))
        return [embed_text(text) for text in texts]


#: One entry per call of the default backend since the test began (see ``tests/conftest.py``).
USED: list[int] = []

STATE: dict[str, Any] = {"failing": False, "events": []}
CALLS: list[list[str]] = []


class SwitchableEmbeddings:
    similarity_floor = StemEmbeddings.similarity_floor

    def __init__(self, name: str = "switchable") -> None:
        self.name = name

    def embed(self, texts: list[str]) -> list[list[float]]:
        CALLS.append(list(texts))
        STATE["events"].append("embed")
        if STATE["failing"]:
            raise ConnectionError("the embedding server is down")
        return [embed_text(text) for text in texts]


def default_config() -> dict[str, Any]:
    """The test settings' ``EMBEDDINGS``: the fast backend."""
    return {"BACKEND": BACKEND, "OPTIONS": {}}


def config(name: str = "switchable") -> dict[str, Any]:
    return {"BACKEND": "tests.fake_embeddings.SwitchableEmbeddings", "OPTIONS": {"name": name}}


def reset() -> None:
    STATE["failing"] = False
    STATE["events"] = []
    CALLS.clear()
