"""The person's memory as a Model Context Protocol server (SPEC §14).

- ``path("mcp/", include("agent_memory.mcp.urls"))`` serves the Streamable HTTP transport: each
  request carries a person's access token (``Authorization: Bearer …``) and acts as that person
  only.
- ``manage.py memory_mcp --user NAME`` serves the same over stdio, for a local client.

Both offer the tool ``manage_memory`` (the schema, answers and errors of
:meth:`~agent_memory.LongTermMemory.call_tool`) and the resource ``memory://block``, the memory
block the agent would see now. People make and revoke their tokens on the memory screen
("Connected apps"); :mod:`agent_memory.mcp.tokens` keeps only their SHA-256 digests.

The server is the official ``mcp`` SDK's (the ``mcp`` extra); only :mod:`.server`, :mod:`.views`
and :mod:`.urls` import it, so the screen's token section works without it.
"""
