"""What the admin's tests send to the notes' admin pages and read back from them."""

from __future__ import annotations

from typing import Any

#: The notes' list in admin; ``{NOTES}<id>/change/`` and ``{NOTES}add/`` are its forms.
NOTES = "/admin/agent_memory/memorynote/"


def add(memory: Any, user: Any, content: str, categories: tuple[str, ...] | list[str] = ("Food",)):
    """One note of ``user``'s, written through ``memory``."""
    (note,) = memory.create_notes(user, [{"categories": list(categories), "content": content}])
    return note


def page(response: Any) -> str:
    return response.content.decode()


def change_data(note: Any, **fields: Any) -> dict[str, Any]:
    """What the note's change form sends unchanged, with ``fields`` changed."""
    data = {
        "categories": ", ".join(note.categories),
        "content": note.content,
        "expected_version": note.version,
    }
    data.update(fields)
    return data
