"""What the memory screen's tests send to the screen and read back from it."""

from __future__ import annotations

from typing import Any

from tests.scripted_store import scripted_merge

SCREEN = "/memory/"
#: The header htmx sends with each request it makes.
HTMX = {"HTTP_HX_REQUEST": "true"}


def add(memory: Any, user: Any, content: str, categories: Any = ("Food",), **options: Any):
    """One note of ``user``'s, written through ``memory`` (``options``: those of
    ``create_notes``, e.g. ``pinned``)."""
    (note,) = memory.create_notes(
        user, [{"categories": list(categories), "content": content}], **options
    )
    return note


def text(response: Any) -> str:
    return response.content.decode()


def scripted_merges(settings: Any, user: Any, **options: Any) -> None:
    """Serve the screen from a store with one merge (run 3) of ``user``'s, whose revert fails
    with ``error`` when given (``options``: those of ``scripted_merge``)."""
    merge = scripted_merge(
        user,
        run_id=3,
        merged="Prefers tea, no sugar",
        sources=("Prefers tea", "Takes no sugar"),
        categories=("Food",),
        **options,
    )
    settings.AGENT_MEMORY = {
        "STORE": {"BACKEND": "tests.scripted_store.ScriptedMergeStore", "OPTIONS": merge}
    }
