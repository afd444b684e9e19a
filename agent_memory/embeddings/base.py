"""What an embedding backend is, the configured one, and calling it safely.

A backend is a class built with ``**OPTIONS`` that has ``name`` (a string naming the model;
changing it re-embeds every note) and ``embed(texts) -> vectors``
(:class:`EmbeddingBackend`). :func:`get_embedder` builds the one ``AGENT_MEMORY["EMBEDDINGS"]``
names, once per configuration; :func:`embed_texts` calls it and never raises. The backends whose
model runs in this process load it on first use through :class:`LocalModelEmbeddings`.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from functools import lru_cache
from typing import Any, Protocol

import numpy as np

from ..conf import memory_settings

logger = logging.getLogger("agent_memory.embeddings")


class EmbeddingError(RuntimeError):
    """The backend could not embed: bad answer, HTTP error, timeout, or a model that won't load."""


class EmbeddingBackend(Protocol):
    """What ``AGENT_MEMORY["EMBEDDINGS"]["BACKEND"]`` names: built with ``**OPTIONS``.

    A backend may also have ``similarity_floor`` (the cosine below which a note does not count
    as found by meaning, 0.3 when absent) and, for one of several models side by side,
    ``weigh_query(vector, weights)`` (see :class:`~agent_memory.embeddings.CombinedEmbeddings`).
    """

    #: Names the model: vectors of another name are computed again.
    name: str

    def embed(self, texts: list[str]) -> list[list[float]]:
        """One vector per text, in order (any length, the same for every text)."""
        ...


class LocalModelEmbeddings:
    """A backend whose model runs in this process: loaded on the first :meth:`embed`, not when
    the backend is built, and once however many threads embed at the same time.

    A subclass provides :meth:`load_model` (the model, or :class:`EmbeddingError` saying what
    to install) and :meth:`encode` (one vector per text with the loaded model).
    """

    #: The cosine below which a note does not count as found by meaning.
    similarity_floor = 0.3

    def __init__(self, similarity_floor: float | None = None) -> None:
        if similarity_floor is not None:
            self.similarity_floor = similarity_floor
        self._model: Any = None
        self._lock = threading.Lock()

    def load_model(self) -> Any:
        """The model, loaded; :class:`EmbeddingError` when it cannot be."""
        raise NotImplementedError(
            "subclasses of LocalModelEmbeddings must provide a load_model() method"
        )

    def encode(self, model: Any, texts: list[str]) -> Any:
        """One vector per text of ``texts`` (never empty) from the loaded ``model``."""
        raise NotImplementedError(
            "subclasses of LocalModelEmbeddings must provide an encode() method"
        )

    def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        rows: list[list[float]] = np.asarray(
            self.encode(self._load(), list(texts)), dtype=np.float32
        ).tolist()
        return rows

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                self._model = self.load_model()
            return self._model


def configured() -> dict[str, Any] | None:
    """The ``EMBEDDINGS`` setting: a backend config, or ``None`` when it is ``False``."""
    value = memory_settings.EMBEDDINGS
    return None if value is False else value


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


def similarity_floor() -> float:
    """The cosine from which a note counts as found by meaning, for the configured backend."""
    embedder = get_embedder()
    return float(getattr(embedder, "similarity_floor", 0.3))


def warm_up() -> bool:
    """Load the configured embedding model now, by embedding one word, so that this process's
    first search does not wait for it (about 0.4 s for the default).

    Call it where a server process starts (the example project's ``wsgi.py`` does). With a
    remote backend it makes one request. ``False`` when embeddings are off or the backend
    fails (logged); nothing is raised either way.
    """
    return embed_texts(get_embedder(), ["memory"]) is not None


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return ("dict", tuple(sorted((key, _freeze(item)) for key, item in value.items())))
    if isinstance(value, list | tuple):
        return ("list", tuple(_freeze(item) for item in value))
    return value


def _thaw(value: Any) -> Any:
    if isinstance(value, tuple) and len(value) == 2 and value[0] == "dict":
        return {key: _thaw(item) for key, item in value[1]}
    if isinstance(value, tuple) and len(value) == 2 and value[0] == "list":
        return [_thaw(item) for item in value[1]]
    return value


@lru_cache(maxsize=8)
def _build(path: str, options: Any) -> Any:
    from django.utils.module_loading import import_string

    return import_string(path)(**_thaw(options))


def pack(vector: Sequence[float]) -> bytes:
    """A vector as compact bytes (float32, unit length) for storage."""
    array = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(array))
    return (array / norm if norm > 0 else array).astype(np.float32).tobytes()


#: Texts given to the backend at once: a worker's memory after embedding a person's notes stays
#: near what one small batch needs (200 texts at once left about 60 MB more resident).
EMBED_BATCH = 16


def embed_texts(embedder: EmbeddingBackend | None, texts: list[str]) -> list[bytes] | None:
    """The packed vectors of ``texts`` (:data:`EMBED_BATCH` at a time), or ``None`` (logged)
    when the backend fails."""
    if embedder is None or not texts:
        return None
    try:
        packed: list[bytes] = []
        for start in range(0, len(texts), EMBED_BATCH):
            batch = list(texts[start : start + EMBED_BATCH])
            vectors = embedder.embed(batch)
            if len(vectors) != len(batch):
                raise EmbeddingError(f"{len(vectors)} vectors came back for {len(batch)} texts.")
            packed.extend(pack(vector) for vector in vectors)
        return packed
    except Exception:
        logger.warning(
            "The embedding backend %s failed; notes are kept and embedded later.",
            getattr(embedder, "name", type(embedder).__name__),
            exc_info=True,
        )
        return None
