"""Search after a write reads and embeds only the notes that changed: the other rows of the
person's vector matrix stay as they were."""

from __future__ import annotations

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agent_memory import LongTermMemory, embeddings
from agent_memory.stores.in_memory import InMemoryStore
from tests import fake_embeddings


@pytest.fixture
def counted(settings):
    settings.AGENT_MEMORY = {"EMBEDDINGS": fake_embeddings.config("after-write")}
    fake_embeddings.reset()
    embeddings.forget_matrices()
    yield fake_embeddings.CALLS
    embeddings.forget_matrices()
    fake_embeddings.reset()


def seed(memory, person):
    return memory.create_notes(
        person,
        [
            {"categories": ["Drinks"], "content": "Likes green tea in the morning."},
            {"categories": ["Work"], "content": "Deploys the billing service on Fridays."},
            {"categories": ["Travel"], "content": "Flies to Lisbon every spring."},
        ],
    )


def matrix_of(memory, person):
    notes, matrix = embeddings.person_matrix(
        memory.store, person if isinstance(person, int) else person.pk, embeddings.get_embedder()
    )
    return {note.id: row for note, row in zip(notes, matrix, strict=True)}


@pytest.mark.django_db
def test_search_after_an_update_embeds_and_reads_only_the_changed_note(make_user, counted):
    memory = LongTermMemory()
    person = make_user()
    tea, billing, lisbon = seed(memory, person)
    memory.search(person, "tea")
    before = matrix_of(memory, person)
    counted.clear()

    changed = memory.update_note(
        person, billing.id, billing.version, ["Work"], "Deploys the billing service on Mondays."
    )
    with CaptureQueriesContext(connection) as captured:
        found = memory.search(person, "billing service")

    embedded = [text for call in counted for text in call]
    assert embedded == ["Work: Deploys the billing service on Mondays.", "billing service"]
    vector_reads = [q["sql"] for q in captured.captured_queries if "notevector" in q["sql"]]
    reads = [sql for sql in vector_reads if sql.lstrip().upper().startswith("SELECT")]
    # One read of the changed note's vector, not of every note with its vector.
    assert len(reads) == 1 and " IN (" in reads[0] and "content" not in reads[0]
    assert found.notes[0].id == changed.id
    after = matrix_of(memory, person)
    assert np.array_equal(after[tea.id], before[tea.id])
    assert np.array_equal(after[lisbon.id], before[lisbon.id])
    assert not np.array_equal(after[billing.id], before[billing.id])
    # The same rows as a matrix built from scratch from the stored vectors.
    embeddings.forget_matrices()
    rebuilt = matrix_of(memory, person)
    assert all(np.allclose(rebuilt[key], after[key]) for key in rebuilt)


def test_search_after_a_delete_and_a_create_in_memory_embeds_only_the_new_note(counted):
    memory = LongTermMemory(store=InMemoryStore())
    tea, billing, lisbon = seed(memory, 1)
    memory.search(1, "tea")
    counted.clear()
    memory.delete_note(1, lisbon.id, lisbon.version)
    (new,) = memory.create_notes(1, [{"categories": ["Pets"], "content": "Has a cat, Mira."}])

    memory.search(1, "cat")

    assert [text for call in counted for text in call] == ["Pets: Has a cat, Mira.", "cat"]
    assert set(matrix_of(memory, 1)) == {tea.id, billing.id, new.id}
