"""A model's token table read row by row from its file: the same rows as the array,
and nothing of it kept in the process."""

from __future__ import annotations

import numpy as np
import pytest

from agent_memory.embeddings import FileRows


@pytest.fixture
def table(tmp_path):
    array = np.arange(40 * 6, dtype=np.uint8).reshape(40, 6)
    path = tmp_path / "table.npy"
    np.save(path, array)
    return path, array


def test_indexing_reads_the_same_rows_as_the_array_in_the_given_order(table):
    path, array = table
    rows = FileRows(path)
    wanted = np.array([5, 0, 39, 5, 17], dtype=np.int64)
    assert rows.shape == (40, 6) and rows.dtype == np.uint8
    assert np.array_equal(rows[wanted], array[wanted])
    assert np.array_equal(rows[[]], array[[]].reshape(0, 6))


def test_rows_come_back_in_the_shape_of_the_index(table):
    # WordLlama looks up a batch of texts at once: one row of token ids per text.
    path, array = table
    ids = np.array([[3, 3, 0], [39, 1, 2]], dtype=np.int32)
    picked = FileRows(path)[ids]
    assert picked.shape == (2, 3, 6)
    assert np.array_equal(picked, array[ids])


def test_a_row_past_the_table_is_an_index_error(table):
    path, _ = table
    with pytest.raises(IndexError):
        FileRows(path)[[40]]


def test_an_array_that_is_not_a_table_of_numbers_is_refused(tmp_path):
    path = tmp_path / "flat.npy"
    np.save(path, np.zeros(10))
    with pytest.raises(ValueError, match="two-dimensional"):
        FileRows(path)
