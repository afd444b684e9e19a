"""WordLlama: static token embeddings (a table of token vectors, averaged), from its own wheel."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np

from .base import EmbeddingError


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
                    _cap_word_cache(self._model)
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
        rows: list[list[float]] = np.asarray(vectors, dtype=np.float32).tolist()
        return rows


#: Words whose tokens WordLlama's tokenizer keeps. Its default, 10,000, held about 30 MB once a
#: worker had embedded a few thousand notes (even 1,000 held 15 MB); splitting a word again costs
#: microseconds, so none are kept.
WORD_CACHE_SIZE = 0


def _cap_word_cache(model: Any) -> None:
    # The ``tokenizers`` model's own cache resizer; without it (another tokenizer) nothing is done.
    resize = getattr(
        getattr(getattr(model, "tokenizer", None), "model", None), "_resize_cache", None
    )
    if callable(resize):
        resize(WORD_CACHE_SIZE)
