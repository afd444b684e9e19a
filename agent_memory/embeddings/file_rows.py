"""A two-dimensional ``.npy`` array read row by row from its file."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np


class FileRows:
    """A two-dimensional ``.npy`` array whose rows are read from its file when indexed with
    an array of row numbers of any shape (``table[[3, 17, 3]]``, ``table[ids_by_text]``; the
    rows come back in that shape, as numpy's own indexing gives them), one ``pread`` per
    distinct row.

    The sentence encoder's token table is 65 MB and WordLlama's 33 MB. Mapped into memory,
    every token a process ever looks up leaves its page resident in that process: a worker's
    RSS grew by about 60 MB over its first few hundred searches; loaded, each worker holds the
    whole table. Read this way the rows come from the kernel's page cache, which all worker
    processes share and none counts in its RSS; a query of 30 tokens costs about 30 µs more.
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
        return picked.reshape(*np.shape(index), self.shape[1])

    def __del__(self, _close: Callable[[int], None] = os.close) -> None:
        # ``os.close`` is bound here: at interpreter exit the module's globals may be gone.
        fd = getattr(self, "_fd", None)
        if fd is not None:
            try:
                _close(fd)
            except OSError:
                pass
