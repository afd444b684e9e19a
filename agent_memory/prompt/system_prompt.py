"""The constant text about memory for the agent's system prompt."""

from __future__ import annotations

from pathlib import Path

from ..names import TOOL_NAME
from .block import TAG

INSTRUCTIONS_TEMPLATE = "agent_memory/instructions.txt"


def instructions() -> str:
    """The constant text about memory for the agent's system prompt.

    Rendered from the template ``agent_memory/instructions.txt``, which a host overrides like
    any app template. Without a configured template engine the packaged text is used.
    """
    from django.template import Engine, TemplateDoesNotExist
    from django.template.loader import render_to_string

    context = {"tool_name": TOOL_NAME, "tag": TAG}
    try:
        text = render_to_string(INSTRUCTIONS_TEMPLATE, context)
    except TemplateDoesNotExist:
        engine = Engine(dirs=[str(Path(__file__).resolve().parent.parent / "templates")])
        text = engine.render_to_string(INSTRUCTIONS_TEMPLATE, context)
    return text.strip()
