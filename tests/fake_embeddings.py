"""An embedding backend for tests: the real offline model behind a switch that makes it fail.

``AGENT_MEMORY["EMBEDDINGS"] = {"BACKEND": "tests.fake_embeddings.SwitchableEmbeddings",
"OPTIONS": {"name": "…"}}``; ``STATE["failing"] = True`` makes every call raise, and
``CALLS`` records the texts of each call with a snapshot of ``STATE["events"]`` taken then.
"""

from __future__ import annotations

from typing import Any

from agent_memory.embeddings import WordLlamaEmbeddings

STATE: dict[str, Any] = {"failing": False, "events": []}
CALLS: list[list[str]] = []
_model = WordLlamaEmbeddings()


class SwitchableEmbeddings:
    similarity_floor = WordLlamaEmbeddings.similarity_floor

    def __init__(self, name: str = "switchable") -> None:
        self.name = name

    def embed(self, texts: list[str]) -> list[list[float]]:
        CALLS.append(list(texts))
        STATE["events"].append("embed")
        if STATE["failing"]:
            raise ConnectionError("the embedding server is down")
        return _model.embed(texts)


def config(name: str = "switchable") -> dict[str, Any]:
    return {"BACKEND": "tests.fake_embeddings.SwitchableEmbeddings", "OPTIONS": {"name": name}}


def reset() -> None:
    STATE["failing"] = False
    STATE["events"] = []
    CALLS.clear()
