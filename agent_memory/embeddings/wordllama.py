"""WordLlama: static token embeddings (a table of token vectors, averaged), from its own wheel."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .base import EmbeddingError, LocalModelEmbeddings


class WordLlamaEmbeddings(LocalModelEmbeddings):
    """The offline default: WordLlama's static token embeddings, loaded from its own wheel.

    ``OPTIONS``: ``config`` (``"l2_supercat"``, the weights the wheel carries), ``dim`` (256; 64
    or 128 truncate the same weights), ``similarity_floor`` (the cosine below which a note does
    not count as found by meaning, 0.2).
    """

    similarity_floor = 0.2

    def __init__(
        self, config: str = "l2_supercat", dim: int = 256, similarity_floor: float | None = None
    ) -> None:
        super().__init__(similarity_floor)
        self.config = config
        self.dim = dim
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
        return model

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
