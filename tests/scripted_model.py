"""A scripted model backend for optimizer tests: answers come from a per-test script.

Configure it with ``AGENT_MEMORY["MODELS"] = {"default": {"BACKEND":
"tests.scripted_model.ScriptedModel", "OPTIONS": {"script": "name"}}}`` and put the answers in
``SCRIPTS["name"]``: each entry is a string, an exception to raise, or a callable taking the
person's notes (parsed from the prompt) and returning either.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

SCRIPTS: dict[str, list[Any]] = {}
CALLS: list[list[dict[str, Any]]] = []


def notes_in(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The notes the prompt shows the model, as dicts with ids as ints."""
    notes = []
    for line in messages[-1]["content"].splitlines():
        if not line.startswith("{"):
            continue  # the intro lines, and the notes the person kept apart
        item = json.loads(line)
        item["id"] = int(item["id"].split(":")[1])
        notes.append(item)
    return notes


def groups(*items: dict[str, Any]) -> str:
    return json.dumps({"groups": list(items)}, ensure_ascii=False)


class ScriptedModel:
    def __init__(self, script: str = "default") -> None:
        self.script = script

    def complete(self, messages: list[dict[str, Any]]) -> str:
        CALLS.append(messages)
        queue = SCRIPTS.get(self.script) or []
        if not queue:
            raise AssertionError(f"The scripted model {self.script!r} has no answer left.")
        answer = queue.pop(0)
        if isinstance(answer, Callable):  # type: ignore[arg-type]
            answer = answer(notes_in(messages))
        if isinstance(answer, BaseException):
            raise answer
        return answer


def configure(name: str, *answers: Any) -> dict[str, Any]:
    """Put ``answers`` in the script ``name``; return the MODELS entry that uses it."""
    SCRIPTS[name] = list(answers)
    return {"BACKEND": "tests.scripted_model.ScriptedModel", "OPTIONS": {"script": name}}
