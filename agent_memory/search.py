"""Search over a person's notes: word stems (Snowball, Russian and English) fused with meaning.

A person has at most a few hundred short notes, so search ranks them in Python over the list the
store returns, and compares the query's embedding with every note's by brute force in numpy
(:mod:`agent_memory.embeddings`); every store answers the same way, with no database-specific
full-text or vector index.
"""

from __future__ import annotations

import logging
import re
from bisect import bisect_left
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import snowballstemmer

from .notes import Note
from .rules import parse_note_id

#: The longest search query accepted (by the tool and the Python API alike); a query is a few
#: words, not a document, and ranking grows with its length.
MAX_QUERY_CHARS = 500

logger = logging.getLogger("agent_memory")

_WORD_RE = re.compile(r"\w+", re.UNICODE)
KEY_QUERY_RE = re.compile(r"^\s*memory:\s*(\d+)\s*$", re.IGNORECASE)
_CYRILLIC_RE = re.compile(r"[а-яё]")
_LATIN_RE = re.compile(r"[a-z]")

_STOP_WORDS = frozenset(
    """
    a an and are as at be but by do does for from has have i in into is it its me my of on or our
    so than that the their them then there these they this to was we were what when where which
    who will with you your about also any all can no not he she him his her does did how
    nothing something anything
    а без бы в во вот все всё вы да для до его её ее если же за и из или им их к как ко когда ли
    мне мой мы на над не нет ни но о об обо он она они оно от по под при с со так также то тоже у
    уже что чтобы это эта этот я какой какая какое какие где кто ничего
    """.split()
)
# "не"/"not" carry meaning in notes ("не любит кофе"), but as search words they match everything.

_STEMMERS = {
    "ru": snowballstemmer.stemmer("russian"),
    "en": snowballstemmer.stemmer("english"),
}


@lru_cache(maxsize=20_000)
def stem(word: str) -> str:
    """The Snowball stem of one lower-case word, Russian or English by its letters."""
    word = word.replace("ё", "е")
    if word.isdigit():
        return word
    language = "ru" if _CYRILLIC_RE.search(word) else "en"
    return str(_STEMMERS[language].stemWord(word))


def words(text: str) -> list[str]:
    return _WORD_RE.findall(text.casefold())


def stems(text: str, *, keep_stop_words: bool = True) -> list[str]:
    return [stem(word) for word in words(text) if keep_stop_words or word not in _STOP_WORDS]


@dataclass(frozen=True)
class SearchResult:
    """The best ``notes`` (at most ``SEARCH_LIMIT``) and the ``total`` count of matches."""

    notes: list[Note]
    total: int

    def as_dict(self) -> dict[str, object]:
        return {"notes": [note.as_dict() for note in self.notes], "total": self.total}


#: Reciprocal rank fusion: a note's score is the sum of ``1 / (RRF_K + rank)`` over the rankings.
RRF_K = 60
#: A note counts as found by meaning only within this cosine of the best match.
MEANING_MARGIN = 0.15


@dataclass(frozen=True)
class Floor:
    """The relevance floor of the meaning side for one model and one query language.

    ``cosine``: a query whose best match stays below it is about nothing in the person's memory,
    and meaning finds no note for it. ``weights``: for a backend of several models
    (``CombinedEmbeddings``), how much each model's cosine counts in this language (``None``:
    as configured).
    """

    cosine: float
    weights: tuple[float, ...] | None = None


#: The default embeddings' name (``CombinedEmbeddings`` with its two default parts).
DEFAULT_MODEL = "wordllama/l2_supercat/256*1+use-multilingual-v3*1"

#: Relevance floors calibrated per model (by its ``name``) and query language with
#: ``python -m benchmarks search``: on the off-topic queries of :mod:`benchmarks.search_corpus`
#: most find no note, while recall@10 on the recall corpus stays at 0.95 or more. In Russian the
#: sentence encoder carries the meaning (WordLlama scores unrelated Russian texts 0.6 alike); in
#: English both models count. A model not listed uses its backend's ``similarity_floor``.
CALIBRATED_FLOORS: dict[str, dict[str, Floor]] = {
    DEFAULT_MODEL: {"en": Floor(0.23, (0.6, 0.4)), "ru": Floor(0.285, (0.1, 0.9))},
}


def query_language(query: str) -> str:
    """``"ru"`` when the query has more Cyrillic letters than Latin ones, else ``"en"``."""
    folded = query.casefold()
    return "ru" if len(_CYRILLIC_RE.findall(folded)) > len(_LATIN_RE.findall(folded)) else "en"


def meaning_floor(embedder: Any, query: str, options: Mapping[str, Any] | None = None) -> Floor:
    """The floor for ``query`` with ``embedder``: a ``similarity_floor`` set in the backend's
    ``OPTIONS`` wins, then the calibrated one for the model's name and the query's language,
    then the backend's own ``similarity_floor`` (0.3 when it has none)."""
    default = Floor(float(getattr(embedder, "similarity_floor", 0.3)))
    if options and options.get("similarity_floor") is not None:
        return default
    calibrated = CALIBRATED_FLOORS.get(str(getattr(embedder, "name", "")), {})
    return calibrated.get(query_language(query), default)


def search_notes(
    notes: Sequence[Note],
    query: str,
    limit: int,
    similarities: Iterable[float] | None = None,
    floor: float = 0.3,
) -> SearchResult:
    """Rank ``notes`` (most recently changed first, as stores list them) against ``query``.

    Two rankings are fused with reciprocal rank fusion. By word stems: a note matches when it
    holds every meaningful stem of the query (stop words aside; in its text or categories, or a
    longer stem that starts with the query's), exact stems over prefixes, category hits as a
    bonus. By meaning, when ``similarities`` (the cosine of the query with each note, in the
    order of ``notes``) are given: when the best cosine reaches ``floor`` (see
    :func:`meaning_floor`), the notes from the floor up and within ``MEANING_MARGIN`` of the
    best; below the floor the query is about nothing the person's memory holds. A note found by
    either side is a result and counts in ``total``; ties go to the most recently changed note.
    ``memory:<id>`` finds that note. Each search logs (DEBUG, logger ``agent_memory``) the
    candidates' ids with both scores, the floor and the ids returned, never a note's text.
    """
    key = KEY_QUERY_RE.match(query)
    if key:
        note_id = parse_note_id(key.group(1))
        found = [note for note in notes if note.id == note_id]
        return SearchResult(notes=found[:limit], total=len(found))

    wanted = set(stems(query, keep_stop_words=False)) or set(stems(query))
    fused = [0.0] * len(notes)
    relevant: set[int] = set()
    word_scores: dict[int, float] = {}
    if wanted:
        # A note sharing one of the query's words but not the others is not a word match:
        # "xyzzy nothing" or "garden party" would otherwise find every note that says "garden".
        word_scores = {
            position: score
            for position, note in enumerate(notes)
            if (score := _score(wanted, note)) > 0 and _holds_every(wanted, note)
        }
        by_stems = sorted(word_scores.items(), key=lambda item: (-item[1], item[0]))
        for rank, (position, _) in enumerate(by_stems, start=1):
            fused[position] += 1.0 / (RRF_K + rank)
            relevant.add(position)
    values: list[float] = []
    cutoff = None
    if similarities is not None:
        values = [float(value) for value in similarities]
        best = max(values, default=0.0)
        if best >= floor:
            # Near the best match too: a query in a script the model knows little of can score
            # every note above the floor.
            cutoff = best - MEANING_MARGIN
            by_meaning = [(v, position) for position, v in enumerate(values) if v >= cutoff]
            by_meaning.sort(key=lambda item: (-item[0], item[1]))
            for rank, (_, position) in enumerate(by_meaning, start=1):
                fused[position] += 1.0 / (RRF_K + rank)
                relevant.add(position)
    # Stable order: higher fused score first, then the store's order (most recently changed).
    ranked = sorted(relevant, key=lambda position: (-fused[position], position))
    result = SearchResult(notes=[notes[position] for position in ranked[:limit]], total=len(ranked))
    if logger.isEnabledFor(logging.DEBUG):
        _log(notes, word_scores, values, floor, cutoff, result)
    return result


#: How many of the best notes by meaning the DEBUG line names (besides every word match).
LOGGED_CANDIDATES = 10


def _log(
    notes: Sequence[Note],
    word_scores: Mapping[int, float],
    values: Sequence[float],
    floor: float,
    cutoff: float | None,
    result: SearchResult,
) -> None:
    by_meaning = sorted(range(len(values)), key=lambda position: -values[position])
    candidates = sorted(set(word_scores) | set(by_meaning[:LOGGED_CANDIDATES]))
    described = " ".join(
        f"{notes[position].id}:words={word_scores.get(position, 0):g}"
        + (f",meaning={values[position]:.3f}" if values else "")
        for position in candidates
    )
    logger.debug(
        "search: floor=%s cutoff=%s candidates=[%s] returned=%s total=%d",
        f"{floor:.3f}" if values else "off",
        f"{cutoff:.3f}" if cutoff is not None else "none",
        described,
        [note.id for note in result.notes],
        result.total,
    )


def _holds_every(wanted: set[str], note: Note) -> bool:
    _, every, longer = _note_stems(note.content, note.categories)
    return all(
        query_stem in every or (len(query_stem) >= 3 and _has_prefix(longer, query_stem))
        for query_stem in wanted
    )


def _score(wanted: set[str], note: Note) -> float:
    category_stems, every, longer = _note_stems(note.content, note.categories)
    score = 0.0
    for query_stem in wanted:
        if query_stem in every:
            score += 1.0
        elif len(query_stem) >= 3 and _has_prefix(longer, query_stem):
            score += 0.5
        else:
            continue
        if query_stem in category_stems:
            score += 0.25
    return score


def _has_prefix(ordered: tuple[str, ...], prefix: str) -> bool:
    """Whether a string of ``ordered`` (sorted) starts with ``prefix``: the first string not
    below it is the one to check."""
    index = bisect_left(ordered, prefix)
    return index < len(ordered) and ordered[index].startswith(prefix)


#: Notes whose stems a process keeps (about 1 KB each: 2 MB at most, the notes of the people
#: whose vector matrices it keeps and more).
NOTE_STEMS_CACHE_SIZE = 2_048


@lru_cache(maxsize=NOTE_STEMS_CACHE_SIZE)
def _note_stems(
    content: str, categories: tuple[str, ...]
) -> tuple[frozenset[str], frozenset[str], tuple[str, ...]]:
    """The stems of a note's categories, of its text and categories, and those of the latter
    longer than two letters in order, for prefix matches (cached: notes change rarely, searches
    repeat)."""
    category_stems = frozenset(stems(" ".join(categories)))
    every = category_stems | frozenset(stems(content))
    return category_stems, every, tuple(sorted(stem for stem in every if len(stem) > 2))
