"""WordLlama: static token embeddings (a table of token vectors, averaged), from its own wheel."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import Any

from . import encoder_cache
from .base import EmbeddingError, LocalModelEmbeddings

logger = logging.getLogger("agent_memory.embeddings")


class WordLlamaEmbeddings(LocalModelEmbeddings):
    """The offline default: WordLlama's static token embeddings, loaded from its own wheel.

    ``OPTIONS``: ``config`` (``"l2_supercat"``, the weights the wheel carries), ``dim`` (256; 64
    or 128 truncate the same weights), ``similarity_floor`` (the cosine below which a note does
    not count as found by meaning, 0.2), ``cache_dir`` (where its token table is kept as a
    file, read row by row so that no worker holds it, 33 MB at 256 dimensions; the sentence
    encoder's folder by default, ``False`` to hold the table in each process).
    """

    similarity_floor = 0.2

    def __init__(
        self,
        config: str = "l2_supercat",
        dim: int = 256,
        similarity_floor: float | None = None,
        cache_dir: str | bool | None = None,
    ) -> None:
        super().__init__(similarity_floor)
        self.config = config
        self.dim = dim
        self.cache_dir = cache_dir
        self.name = f"wordllama/{config}/{dim}"

    def load_model(self) -> Any:
        try:
            import wordllama
            from wordllama import WordLlama

            # The package's own folder holds weights/ and tokenizers/: loading from there with
            # downloads disabled never reaches the network.
            folder = Path(wordllama.__file__).resolve().parent
            model = WordLlama.load(
                config=self.config, cache_dir=folder, dim=self.dim, disable_download=True
            )
            _cap_word_cache(model)
        except Exception as error:
            raise EmbeddingError(
                f"The WordLlama model {self.config!r} could not be loaded: {error}. "
                'Install the "wordllama" package, or set AGENT_MEMORY["EMBEDDINGS"].'
            ) from error
        self._table_from_file(model, wordllama)
        return model

    def _table_from_file(self, model: Any, package: Any) -> None:
        """Swap the loaded model's token table for its copy in the cache folder, read row by
        row; where that fails (logged at debug level) the model keeps the table it loaded."""
        try:
            folder = encoder_cache.folder_for(
                package,
                self.cache_dir,
                kind=f"wordllama-{self.config}-{self.dim}",
                shipped_in=("weights", "tokenizers"),
            )
        except OSError:
            folder = None
        if folder is None:
            return
        try:
            model.embedding = encoder_cache.table_rows(model.embedding, folder)
        except Exception:
            logger.debug("Could not keep WordLlama's token table in %s.", folder, exc_info=True)
            if encoder_cache.is_complete(folder):
                shutil.rmtree(folder, ignore_errors=True)  # unusable: kept again next time

    def encode(self, model: Any, texts: list[str]) -> Any:
        return model.embed(texts, norm=True)


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
