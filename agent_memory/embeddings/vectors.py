"""The vectors kept per note, and each person's notes as one matrix of them.

Vectors are stored per note with the backend's ``name`` and a digest of the text they were
computed from, so a note whose text changed, or a change of model, is re-embedded. A note is
embedded when first needed (:func:`notes_and_similarities`, :func:`person_matrix`); a process
keeps the latest matrices it built, so a search reads only the notes, not their vectors, while
they are unchanged.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from ..notes import NewNote, Note
from .base import EmbeddingBackend, embed_texts, get_embedder

logger = logging.getLogger("agent_memory.embeddings")


def note_text(note: Note | NewNote) -> str:
    """The text a note is embedded from: its categories, then its content."""
    return f"{' / '.join(note.categories)}: {note.content}"


@lru_cache(maxsize=4_096)
def digest(text: str) -> str:
    """A short fingerprint of an embedded text, stored beside its vector (cached: search checks
    every note's on each call)."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=12).hexdigest()


@dataclass(frozen=True)
class StoredVector:
    """A note's vector as a store keeps it: the model's name, the text's digest, the floats."""

    model: str
    digest: str
    vector: bytes

    def array(self) -> np.ndarray:
        return np.frombuffer(self.vector, dtype=np.float32)


def notes_and_similarities(
    store: Any, user_id: Any, query: str | None, weights: Sequence[float] | None = None
) -> tuple[list[Note], np.ndarray | None, np.ndarray | None]:
    """The person's notes, their vectors (rows, unit length) and the query's cosine with each.

    ``weights``: for a backend with several models (``weigh_query``), how much each model's
    cosine counts for this query (see :data:`agent_memory.search.CALIBRATED_FLOORS`).

    Notes without a vector for the configured model, or whose text changed, are embedded now and
    the vectors stored. ``None`` for the vectors when embeddings are off or the backend fails
    (logged): the caller falls back to word stems.
    """
    embedder = get_embedder()
    if embedder is None:
        return store.list_notes(user_id), None, None
    notes, matrix = person_matrix(store, user_id, embedder)
    if matrix is None:
        return notes, None, None
    if query is None:
        return notes, matrix, None
    packed = embed_texts(embedder, [query])
    if packed is None:
        return notes, matrix, None
    query_vector = np.frombuffer(packed[0], dtype=np.float32)
    if weights is not None and callable(getattr(embedder, "weigh_query", None)):
        query_vector = embedder.weigh_query(query_vector, weights)
    if matrix.shape[0] and matrix.shape[1] != query_vector.shape[0]:
        return notes, matrix, None
    return notes, matrix, matrix @ query_vector if matrix.shape[0] else np.zeros(0)


#: How many people's vector matrices a process keeps at most (LRU) …
MATRIX_CACHE_SIZE = 32
#: … and how many bytes of them: 4 MB is 6 people with 200 notes at the default pair's 768
#: dimensions, 13 with 100 (a miss reads the person's vectors again, a few ms).
MATRIX_CACHE_BYTES = 4_000_000
_matrices: OrderedDict[tuple[Any, ...], np.ndarray] = OrderedDict()
_matrices_lock = threading.Lock()


def _matrix_key(store: Any, embedder: EmbeddingBackend, notes: Sequence[Note]) -> tuple[Any, ...]:
    # The vectors follow from the model and the notes' texts alone, so this key names them (the
    # store's database too, so that one store's vectors are kept in it).
    where = (type(store).__name__, getattr(store, "using", None))
    return (*where, embedder.name, *((note.id, digest(note_text(note))) for note in notes))


def person_matrix(
    store: Any, user_id: Any, embedder: EmbeddingBackend
) -> tuple[list[Note], np.ndarray | None]:
    """The person's notes and their vectors as a read-only matrix (``None`` if the backend fails).

    The notes are read on every call; the vectors only when this process has not built the
    matrix for these very notes (ids and texts) and this model: a person's notes change far less
    often than they are searched, and the vectors are most of what a read would carry. After a
    write, the rows of the notes whose text did not change come from the person's previous
    matrix, and only the new and changed notes' vectors are read (a store with ``vectors_of``)
    or embedded.
    """
    notes, _ = store.list_notes_with_vectors(user_id, vectors=False)
    key = _matrix_key(store, embedder, notes)
    person = (*key[:3], user_id)
    with _matrices_lock:
        matrix = _matrices.get(key)
        if matrix is not None:
            _matrices.move_to_end(key)
            _latest[person] = key
            return notes, matrix
        before = _latest.get(person)
        previous = _matrices.get(before) if before is not None else None
    matrix = None
    if previous is not None and before is not None and notes:
        matrix = _patched(store, user_id, embedder, notes, key, before, previous, store.vectors_of)
    if matrix is None:
        notes, stored = store.list_notes_with_vectors(user_id)
        matrix = ensure_vectors(store, user_id, embedder, notes, stored)
        key = _matrix_key(store, embedder, notes)
    if matrix is not None:
        matrix.flags.writeable = False
        with _matrices_lock:
            _matrices[key] = matrix
            _latest[person] = key
            kept = sum(item.nbytes for item in _matrices.values())
            while len(_matrices) > 1 and (
                len(_matrices) > MATRIX_CACHE_SIZE or kept > MATRIX_CACHE_BYTES
            ):
                kept -= _matrices.popitem(last=False)[1].nbytes
            for name in [name for name, latest in _latest.items() if latest not in _matrices]:
                del _latest[name]
    return notes, matrix


#: Each person's latest matrix key in :data:`_matrices` (by store, model and person).
_latest: dict[tuple[Any, ...], tuple[Any, ...]] = {}


def _patched(
    store: Any,
    user_id: Any,
    embedder: EmbeddingBackend,
    notes: Sequence[Note],
    key: tuple[Any, ...],
    before: tuple[Any, ...],
    previous: np.ndarray,
    read_some: Any,
) -> np.ndarray | None:
    """The person's matrix for ``notes`` from their ``previous`` one (whose key is ``before``):
    the rows of unchanged notes kept, the others read or embedded; ``None`` when that fails."""
    place = {item: index for index, item in enumerate(before[3:])}
    wanted = key[3:]
    missing = [note for note, item in zip(notes, wanted, strict=True) if item not in place]
    fresh = None
    if missing:
        fresh = ensure_vectors(
            store, user_id, embedder, missing, read_some(user_id, [note.id for note in missing])
        )
        if fresh is None or fresh.shape[1] != previous.shape[1]:
            return None
    new_rows = {note.id: index for index, note in enumerate(missing)}
    rows = [
        previous[place[item]] if item in place else fresh[new_rows[item[0]]]  # type: ignore[index]
        for item in wanted
    ]
    return np.vstack(rows)


def forget_matrices() -> None:
    """Drop the vector matrices this process keeps (they are rebuilt from the store)."""
    with _matrices_lock:
        _matrices.clear()
        _latest.clear()


def ensure_vectors(
    store: Any,
    user_id: Any,
    embedder: EmbeddingBackend,
    notes: Sequence[Note],
    stored: dict[int, StoredVector],
) -> np.ndarray | None:
    """A matrix with one unit vector per note (in order), embedding and storing missing ones."""
    missing = stale_notes(embedder, notes, stored)
    if missing:
        fresh = embed_notes(embedder, missing)
        if fresh is None:
            return None
        try:
            store.save_vectors(user_id, fresh)
        except Exception:
            logger.warning("Could not store note vectors.", exc_info=True)
        stored = {**stored, **fresh}
    if not notes:
        return np.zeros((0, 0), dtype=np.float32)
    rows = [stored[note.id].array() for note in notes]
    if len({row.shape[0] for row in rows}) != 1:
        return None
    return np.vstack(rows)


def stale_notes(
    embedder: EmbeddingBackend, notes: Sequence[Note], stored: dict[int, StoredVector]
) -> list[Note]:
    """The notes without a vector from ``embedder`` for their current text."""
    return [
        note
        for note in notes
        if (found := stored.get(note.id)) is None
        or found.model != embedder.name
        or found.digest != digest(note_text(note))
    ]


def embed_notes(
    embedder: EmbeddingBackend, notes: Sequence[Note]
) -> dict[int, StoredVector] | None:
    """Fresh vectors for ``notes`` by note id, or ``None`` (logged) when the backend fails."""
    texts = [note_text(note) for note in notes]
    packed = embed_texts(embedder, texts)
    if packed is None:
        return None
    return {
        note.id: StoredVector(embedder.name, digest(text), vector)
        for note, text, vector in zip(notes, texts, packed, strict=True)
    }
