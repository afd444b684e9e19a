"""The agent's side of the front door: the tool it calls, and the memory text of each turn.

:class:`TurnMemory` runs the ``manage_memory`` tool (:mod:`~agent_memory.tool` holds its
schemas and reads its arguments) with the note operations of
:class:`~agent_memory.memory.notes.NoteMemory`, and renders the notes for the prompt
(:mod:`~agent_memory.prompt`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from django.utils.translation import gettext

from .. import prompt, tool
from ..errors import AgentMemoryError, MemoryDisabled
from ..kinds import NoteSource
from ..notes import Note
from ..people import user_id_of
from ..prompt import Block, Turn
from .notes import NoteMemory

logger = logging.getLogger("agent_memory")


class TurnMemory(NoteMemory):
    """The tool and prompt members of :class:`~agent_memory.LongTermMemory`."""

    @property
    def instructions(self) -> str:
        """Constant text for the agent's system prompt: how to use memory."""
        return prompt.instructions()

    def tool_definition(self, format: str = "openai") -> dict[str, Any]:
        """The ``manage_memory`` tool for ``"openai"``, ``"anthropic"`` or ``"json"``."""
        return tool.tool_definition(format, self.limits)

    def tools(
        self,
        app_tools: Sequence[Mapping[str, Any]] = (),
        format: str = "openai",
        *,
        user: Any = None,
        temporary: bool = False,
    ) -> list[Any]:
        """``app_tools`` plus the memory tool; a clash of names raises ToolNameConflictError.

        With ``user`` whose memory is off, or for a ``temporary`` chat, the memory tool is left
        out (the names are checked all the same)."""
        merged = tool.merge_tools(app_tools, self.tool_definition(format), format)
        if temporary or (user is not None and not self.enabled(user)):
            return merged[:-1]
        return merged

    def call_tool(
        self, user: Any, arguments: Any, origin: str = "", *, temporary: bool = False
    ) -> dict[str, Any]:
        """Run one ``manage_memory`` call; failures come back as ``{"error": …}``, never raised.

        ``arguments``: the dict or the JSON text the model sent (read by
        :func:`~agent_memory.tool.parse_call`). ``origin``: where the call happened, as the host
        names it (e.g. ``chat:42``), never the model; stored on the notes it writes, so the
        memory screen can link each note to its chat. In a ``temporary`` chat, or with the
        person's memory off, it answers kind ``disabled`` and touches nothing. An invalid call
        writes nothing."""
        try:
            if temporary:
                raise MemoryDisabled.temporary()
            if not self.enabled(user):
                raise MemoryDisabled.switched_off()
            return self._run(user, tool.parse_call(arguments, self.limits), origin or "")
        except AgentMemoryError as error:
            return error.as_dict()
        except Exception:
            # A bug or an outage (the database is down): the model gets an answer it can act
            # on, the server log gets the details. The arguments (note text) are not logged.
            logger.exception("manage_memory failed unexpectedly")
            message = gettext(
                "Memory could not be reached because of an internal error; this call was not "
                "completed. Carry on without memory for now and do not retry in this turn."
            )
            return {"error": {"kind": "invalid", "message": message}}

    def _run(self, user: Any, call: tool.ToolCall, origin: str) -> dict[str, Any]:
        """The answer of one parsed call, as the agent: it never pins or unpins."""
        agent = NoteSource.AGENT
        if call.action == "create":
            created = self.create_notes(user, call.notes, source=agent, origin=origin)
            return {"notes": [note.as_dict() for note in created]}
        if call.action == "update":
            until = {"valid_until": call.valid_until} if call.sets_valid_until else {}
            note = self.update_note(
                user,
                call.id,
                call.version,
                call.categories,
                call.content,
                source=agent,
                origin=origin,
                **until,
            )
            return {"note": note.as_dict()}
        if call.action == "delete":
            return {"deleted": self.delete_note(user, call.id, call.version, source=agent)}
        return self.search(user, call.query).as_dict()

    def blocks(self, user: Any) -> list[Block]:
        """One block per note, newest first; those past ``MAX_BLOCK_CHARS`` are hidden."""
        return self.blocks_of(self.notes(user))

    def blocks_of(self, notes: Sequence[Note]) -> list[Block]:
        """:meth:`blocks` for notes already read (e.g. by :meth:`notes`), without reading again."""
        return prompt.blocks(notes, self.limits.max_block_chars)

    def begin_turn(
        self,
        user: Any,
        state: Mapping[str, Any] | None,
        *,
        reason: str | None = None,
        group: bool = False,
        temporary: bool = False,
    ) -> Turn:
        """What memory text to add to this turn's question.

        A ``temporary`` chat, or a person whose memory is off, gets no text (and no note is
        read); the turn after memory is on again gets the full block."""
        # The listing reads in full only the notes the block has room for.
        return prompt.begin_turn(
            lambda: self._store.note_listing(user_id_of(user)),
            self.limits,
            state,
            reason=reason,
            group=group,
            enabled=(lambda: False) if temporary else (lambda: self.enabled(user)),
        )

    def strip_service_blocks(self, text: str) -> str:
        """Remove ``<agent_memory>`` blocks the model echoed in its answer."""
        return prompt.strip_service_blocks(text)
