"""Several embedding backends side by side in one vector."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .base import EmbeddingError


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
