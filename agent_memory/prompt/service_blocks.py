"""Service blocks the model wrote in its answer, found in any disguise and removed."""

from __future__ import annotations

import re

from ..secrets.normal import fold
from .block import TAG

#: The tag names this app owns in the prompt; :func:`strip_service_blocks` removes them.
SERVICE_BLOCKS: tuple[str, ...] = (TAG,)

# The model may echo a tag in a variant the person's screen would still show as a tag-like
# block: other case, "-" or a space for "_", a space after "<", invisible characters or
# look-alike Cyrillic letters inside the name.
_INVISIBLE = (
    "[\u00ad\u034f\u061c\u115f\u1160\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064"
    "\u2066-\u206f\ufeff]*"
)


def _name_pattern(name: str) -> str:
    """``name`` as a pattern that also takes look-alike letters and invisible characters."""
    parts = []
    for letter in name.lower():
        if letter == "_":
            parts.append(r"[\s_\-]?")
            continue
        look_alikes = "".join(
            chr(code) for code in range(0x0370, 0x0530) if fold(chr(code)).lower() == letter
        )
        parts.append(f"[{re.escape(letter + look_alikes)}]")
    return _INVISIBLE.join(parts) + _INVISIBLE


_NAMES = "|".join(_name_pattern(name) for name in SERVICE_BLOCKS)
_GAP = rf"\s*{_INVISIBLE}\s*"
_OPEN = rf"<{_GAP}(?:{_NAMES})"
_CLOSE = rf"<{_GAP}/{_GAP}(?:{_NAMES}){_GAP}>"
_AFTER = r"(?:[ \t]*\r?\n)?"
#: An opening tag (``self`` set when it closes itself) or a closing one.
_SERVICE_TAG = re.compile(
    rf"(?P<close>{_CLOSE})|{_OPEN}(?=[\s/>])[^>]*?(?P<self>/)?>", re.DOTALL | re.IGNORECASE
)
_TRAILING_LINE_END = re.compile(_AFTER)


def strip_service_blocks(text: str) -> str:
    """Remove ``<agent_memory>`` blocks the model wrote in its answer.

    The tag is recognised in any case and in the variants a model or a prompt injection may
    produce: ``<agent-memory>``, ``< agent_memory>``, ``<agent memory>``, and names with
    invisible characters or look-alike Cyrillic letters inside. Well-formed blocks go (with
    attributes, or self-closing), then an unclosed one from its opening tag to the end, then any
    stray closing tag. Text without them comes back unchanged. A block nested in a block goes
    with the outer one, whole: tags are matched by depth, not to the first closing tag.
    """
    if not isinstance(text, str):
        return text
    kept: list[str] = []
    position = depth = 0
    for tag in _SERVICE_TAG.finditer(text):
        if tag.group("close") is None and tag.group("self") is None:
            if depth == 0:
                kept.append(text[position : tag.start()])
            depth += 1
            continue
        if depth == 0:
            # A self-closing block, or a stray closing tag: only the tag goes.
            kept.append(text[position : tag.start()])
        elif tag.group("close") is not None:
            depth -= 1
            if depth:
                continue
        else:
            continue  # a self-closing tag inside a block goes with the block
        position = _TRAILING_LINE_END.match(text, tag.end()).end()  # type: ignore[union-attr]
    if depth:
        # Unclosed: from its opening tag to the end.
        return "".join(kept).rstrip()
    kept.append(text[position:])
    return "".join(kept)
