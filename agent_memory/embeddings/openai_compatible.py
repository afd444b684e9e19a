"""The ``/embeddings`` endpoint of OpenAI or any compatible server (vLLM, Ollama, llama.cpp,
LiteLLM, …), over HTTP with the standard library."""

from __future__ import annotations

from typing import Any

from ..remote import BackendError, post_json
from .base import EmbeddingError


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
