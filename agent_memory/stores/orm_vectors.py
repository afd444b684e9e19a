"""The notes' vectors for search by meaning in ``DjangoStore``: the ``NoteVector`` table, read
with the notes in one query."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from ..embeddings import StoredVector
from ..models import NoteVector
from ..notes import Note
from .orm_rows import NOTE_FIELDS, note_of_values


def _vector_row(note_id: Any, vector: StoredVector, now: datetime) -> NoteVector:
    return NoteVector(
        note_id=note_id,
        model=vector.model,
        digest=vector.digest,
        vector=vector.vector,
        updated_at=now,
    )


class DjangoVectors:
    """The vector methods of the base, on the ``NoteVector`` table (composed with
    :class:`~agent_memory.stores.orm_notes.DjangoNotes`)."""

    if TYPE_CHECKING:  # the notes side it is composed with

        @property
        def using(self) -> str: ...

        def _rows(self, user_id: Any) -> Any: ...

    # --- vectors for meaning-based search ---------------------------------------------------

    def list_notes_with_vectors(
        self, user_id: Any, *, vectors: bool = True
    ) -> tuple[list[Note], dict[int, StoredVector]]:
        """The person's notes (as :meth:`list_notes`) and their stored vectors, in one query
        (``vectors=False``: the notes alone, the same way).

        Plain rows rather than model instances: search runs this on every call, so it stays
        about as cheap as listing the notes.
        """
        fields = [*NOTE_FIELDS, *(("vector__model", "vector__digest", "vector__vector") * vectors)]
        live = self._rows(user_id).filter(
            Q(valid_until__isnull=True) | Q(valid_until__gt=timezone.now())
        )
        notes, kept = [], {}
        for row in live.order_by("-updated_at", "-id").values_list(*fields):
            note = note_of_values(row)
            notes.append(note)
            if vectors and row[len(NOTE_FIELDS)] is not None:
                model, digest, vector = row[len(NOTE_FIELDS) :]
                kept[note.id] = StoredVector(model, digest, bytes(vector))
        return notes, kept

    def vectors_of(self, user_id: Any, note_ids: Sequence[int]) -> dict[int, StoredVector]:
        """The stored vectors of some of the person's notes (search after a write reads only
        those of the new and changed notes)."""
        rows = NoteVector.objects.using(self.using).filter(
            note__user_id=user_id, note_id__in=list(note_ids)
        )
        return {
            note_id: StoredVector(model, digest, bytes(vector))
            for note_id, model, digest, vector in rows.values_list(
                "note_id", "model", "digest", "vector"
            )
        }

    def save_vectors(self, user_id: Any, vectors: dict[int, StoredVector]) -> None:
        """Keep (or replace) the vectors of the person's notes; notes gone meanwhile are skipped."""
        ids = set(self._rows(user_id).filter(pk__in=list(vectors)).values_list("pk", flat=True))
        now = timezone.now()
        rows = [
            _vector_row(note_id, item, now) for note_id, item in vectors.items() if note_id in ids
        ]
        if not rows:
            return
        try:
            with transaction.atomic(using=self.using):
                NoteVector.objects.using(self.using).bulk_create(
                    rows,
                    update_conflicts=True,
                    unique_fields=["note"],
                    update_fields=["model", "digest", "vector", "updated_at"],
                )
        except IntegrityError:
            pass  # a note was deleted in between: nothing to keep for it
