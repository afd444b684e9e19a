"""Search over a person's notes: word stems (Snowball, Russian and English), ranked.

A person has at most a few hundred short notes, so search ranks them in Python over the list the
store returns; every store answers the same way, with no database-specific full-text setup.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import snowballstemmer

from .notes import Note, parse_note_id

#: The longest search query accepted (by the tool and the Python API alike); a query is a few
#: words, not a document, and ranking grows with its length.
MAX_QUERY_CHARS = 500

_WORD_RE = re.compile(r"\w+", re.UNICODE)
_KEY_QUERY_RE = re.compile(r"^\s*memory:\s*(\d+)\s*$", re.IGNORECASE)
_CYRILLIC_RE = re.compile(r"[а-яё]")

_STOP_WORDS = frozenset(
    """
    a an and are as at be but by do does for from has have i in into is it its me my of on or our
    so than that the their them then there these they this to was we were what when where which
    who will with you your about also any all can no not
    а без бы в во вот все всё вы да для до его её ее если же за и из или им их к как ко когда ли
    мне мой мы на над не нет ни но о об обо он она они оно от по под при с со так также то тоже у
    уже что чтобы это эта этот я
    """.split()
)
# "не"/"not" carry meaning in notes ("не любит кофе"), but as search words they match everything.

_STEMMERS = {
    "ru": snowballstemmer.stemmer("russian"),
    "en": snowballstemmer.stemmer("english"),
}


@lru_cache(maxsize=50_000)
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


def search_notes(notes: Sequence[Note], query: str, limit: int) -> SearchResult:
    """Rank ``notes`` (most recently changed first, as stores list them) against ``query``.

    A note matches when it shares a word stem with the query (in its text or categories, or a
    stem that starts with one of the query's). Ranking: more distinct query stems matched, exact
    stems over prefixes, category hits as a bonus; ties go to the most recently changed note.
    ``memory:<id>`` finds that note.
    """
    key = _KEY_QUERY_RE.match(query)
    if key:
        note_id = parse_note_id(key.group(1))
        found = [note for note in notes if note.id == note_id]
        return SearchResult(notes=found[:limit], total=len(found))

    wanted = set(stems(query, keep_stop_words=False)) or set(stems(query))
    if not wanted:
        return SearchResult(notes=[], total=0)

    scored: list[tuple[float, int, Note]] = []
    for position, note in enumerate(notes):
        score = _score(wanted, note)
        if score > 0:
            scored.append((score, position, note))
    # Stable order: higher score first, then the store's order (most recently changed first).
    scored.sort(key=lambda item: (-item[0], item[1]))
    return SearchResult(notes=[note for _, _, note in scored[:limit]], total=len(scored))


def _score(wanted: set[str], note: Note) -> float:
    text_stems = set(stems(note.content))
    category_stems = set(stems(" ".join(note.categories)))
    every = text_stems | category_stems
    score = 0.0
    for query_stem in wanted:
        if query_stem in every:
            score += 1.0
        elif len(query_stem) >= 3 and any(
            candidate.startswith(query_stem) for candidate in every if len(candidate) > 2
        ):
            score += 0.5
        else:
            continue
        if query_stem in category_stems:
            score += 0.25
    return score
