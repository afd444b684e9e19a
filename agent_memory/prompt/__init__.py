"""Memory in the prompt: the instructions, the ``<agent_memory>`` block, the turn rules.

Memory is read once per chat, like a rules file: the first turn's question carries the full
block, later turns carry nothing, so the start of the prompt stays byte-identical and the
provider's prompt cache keeps working. :func:`begin_turn` decides per turn what to add.

The full block::

    <agent_memory>
    {HEADER}
    <note key="memory:12" version="3" categories="Work / Tools" updated="2026-11-29">…</note>
    [7 more notes not shown; find them with manage_memory search]
    </agent_memory>

The person's pinned notes come first (``pinned="true"``) and are always shown: together they may
take at most half of ``MAX_BLOCK_CHARS`` (:func:`check_pinned_room`). ``MAX_BLOCK_CHARS`` bounds
the whole text above. After the pinned notes, the block holds the longest run of most
recently changed notes that fits (with the overflow line, when some are left out); the older
rest is hidden, still valid and found by search (a store's ``note_listing`` lets the block read
in full only the notes it shows, and the rest by id and version). One hidden note reads
``[1 more note not shown; find it with manage_memory search]``. With no notes at all the block
is the header alone, so the model knows memory is empty. Note text and categories are escaped
(``&``, ``<``, ``>``, ``"`` in attributes, and line breaks as character references), so a note
is always exactly one line and can never open or close a tag.

After a compaction, when the tail still holds an answer whose question had a block, the turn
carries only the difference, in the same wrapper with :data:`DIFFERENCE_HEADER` instead of
:data:`HEADER`: new and changed notes as ``<note>`` lines (newest first), then
``[No longer valid: "memory:<id>"]`` for deleted notes (by id), then
``[Not shown to save space, but still valid: "memory:<id>"]`` for notes the model saw that the
budget now hides (newest first), whether or not they changed: their current text is one search
away. A new note that does not fit is not mentioned. When nothing changed, the text is empty.
A note announced as hidden stays in the state (announced once), so deleting it later is still
reported as no longer valid, and its line comes again when it fits in the block again.

Everything here except :func:`instructions` is plain Python: no request, no template. The
block's rendering is in :mod:`.block`, the turn rules and differences in :mod:`.turns`, the
removal of echoed blocks in :mod:`.service_blocks`, the system prompt's text in
:mod:`.system_prompt`.
"""

from __future__ import annotations

from .block import (
    CLOSE,
    HEADER,
    OPEN,
    TAG,
    Block,
    blocks,
    check_pinned_room,
    escape_attribute,
    escape_text,
    lay_out,
    note_line,
    overflow_line,
    pinned_chars,
    render,
    render_block,
)
from .service_blocks import SERVICE_BLOCKS, strip_service_blocks
from .system_prompt import INSTRUCTIONS_TEMPLATE, instructions
from .turns import (
    DIFFERENCE_HEADER,
    NO_LONGER_VALID,
    NOT_SHOWN,
    REASONS,
    ReadNotes,
    Turn,
    begin_turn,
)

#: The name :func:`lay_out` had when this package was one module.
_layout = lay_out

__all__ = [
    "CLOSE",
    "DIFFERENCE_HEADER",
    "HEADER",
    "INSTRUCTIONS_TEMPLATE",
    "NOT_SHOWN",
    "NO_LONGER_VALID",
    "OPEN",
    "REASONS",
    "SERVICE_BLOCKS",
    "TAG",
    "Block",
    "ReadNotes",
    "Turn",
    "begin_turn",
    "blocks",
    "check_pinned_room",
    "escape_attribute",
    "escape_text",
    "instructions",
    "lay_out",
    "note_line",
    "overflow_line",
    "pinned_chars",
    "render",
    "render_block",
    "strip_service_blocks",
]
