"""Hypothesis example budgets, sized per property.

A property over pure Python (the in-memory store, the secret detector) keeps a generous budget
in every run; the longest, the in-memory chat machine, runs 100 chats a day and 300 in the long
run. A property whose every example hits the database gets a small budget in the everyday run
and its long one with ``AGENT_MEMORY_TEST_HYPOTHESIS=long``. Tests with a long budget carry the
``long_properties`` marker, so ``.ci/run`` runs exactly them once more with the long budgets:
``AGENT_MEMORY_TEST_HYPOTHESIS=long python -m pytest -m long_properties``.
"""

from __future__ import annotations

import os

LONG = os.environ.get("AGENT_MEMORY_TEST_HYPOTHESIS", "").lower() == "long"


def examples(quick: int, long: int) -> int:
    """A budget: ``quick`` in the everyday run, ``long`` in the long run."""
    return long if LONG else quick
