"""Which notes are worth showing the model: likely duplicates only, in calls of bounded size.

A run costs tokens in proportion to the likely duplicates, not to the size of memory:

- :func:`fingerprint` of the person's notes (ids and versions): a person whose notes did not
  change since their last successful run is not sent at all;
- :func:`candidate_groups`: notes joined when they look alike, by meaning (the cosine of their
  embeddings) or by words (the share of word stems they have in common); each connected set of
  such pairs is one candidate group;
- :func:`pack_calls`: the groups packed into model calls of at most ``max_call_chars``
  characters each (prompt included).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

import numpy as np

from ..notes import Note
from ..search import stems
from .proposer import build_messages

#: Two notes are candidates when ``COSINE_WEIGHT * cosine + (1 - COSINE_WEIGHT) * stem overlap``
#: reaches ``COSINE_THRESHOLD`` (tuned on the merge corpus).
COSINE_WEIGHT = 0.6
COSINE_THRESHOLD = 0.55
#: Without embeddings: two notes sharing this share of the smaller one's word stems.
STEM_THRESHOLD = 0.5


def fingerprint(notes: Sequence[Note]) -> str:
    """A digest of the notes' ids and versions: it changes whenever any note changes."""
    pairs = sorted((note.id, note.version) for note in notes)
    return hashlib.sha256(json.dumps(pairs).encode()).hexdigest()[:40]


def stem_overlap(first: set[str], second: set[str]) -> float:
    """The share of the smaller set found in the other (0 when either is empty)."""
    if not first or not second:
        return 0.0
    return len(first & second) / min(len(first), len(second))


def candidate_groups(
    notes: Sequence[Note],
    vectors: np.ndarray | None = None,
    *,
    cosine_threshold: float = COSINE_THRESHOLD,
    stem_threshold: float = STEM_THRESHOLD,
) -> list[list[Note]]:
    """Sets of two or more notes that may repeat each other, each sorted by id.

    ``vectors``: one unit-length row per note (in order), or ``None`` to compare by stems only.
    """
    count = len(notes)
    parent = list(range(count))

    def root(index: int) -> int:
        while parent[index] != index:
            parent[index] = parent[parent[index]]
            index = parent[index]
        return index

    def join(first: int, second: int) -> None:
        parent[root(first)] = root(second)

    words = [set(stems(note.content, keep_stop_words=False)) for note in notes]
    cosines = (
        vectors @ vectors.T if vectors is not None and count and vectors.shape[0] == count else None
    )
    for first in range(count):
        for second in range(first + 1, count):
            overlap = stem_overlap(words[first], words[second])
            if cosines is None:
                alike = overlap >= stem_threshold
            else:
                alike = (
                    COSINE_WEIGHT * float(cosines[first, second]) + (1 - COSINE_WEIGHT) * overlap
                    >= cosine_threshold
                )
            if alike:
                join(first, second)
    groups: dict[int, list[Note]] = {}
    for index, note in enumerate(notes):
        groups.setdefault(root(index), []).append(note)
    found = [sorted(group, key=lambda note: note.id) for group in groups.values() if len(group) > 1]
    return sorted(found, key=lambda group: group[0].id)


def message_chars(notes: Sequence[Note]) -> int:
    """The characters of the prompt that shows the model ``notes``."""
    return sum(len(message["content"]) for message in build_messages(notes))


def pack_calls(groups: Sequence[Sequence[Note]], max_call_chars: int) -> list[list[Note]]:
    """The notes to send in each model call: whole groups packed first-fit, in order, so that a
    call's prompt stays within ``max_call_chars``. A group too big for one call is split into
    consecutive parts that each fit (or hold two notes at the least)."""
    calls: list[list[Note]] = []
    for group in groups:
        for part in _parts(list(group), max_call_chars):
            for call in calls:
                if message_chars(call + part) <= max_call_chars:
                    call.extend(part)
                    break
            else:
                calls.append(list(part))
    return calls


def _parts(group: list[Note], max_call_chars: int) -> list[list[Note]]:
    if message_chars(group) <= max_call_chars:
        return [group]
    parts: list[list[Note]] = [[]]
    for note in group:
        if len(parts[-1]) >= 2 and message_chars(parts[-1] + [note]) > max_call_chars:
            parts.append([])
        parts[-1].append(note)
    return [part for part in parts if len(part) > 1]
