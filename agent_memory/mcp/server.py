"""The MCP server of one person's memory, on the official ``mcp`` SDK's low-level server.

:func:`build_server` makes a server bound to one person: the HTTP view makes one per request
(after checking the token), ``manage.py memory_mcp`` one for the process. Its handlers run the
synchronous memory operations in Django's thread for database work
(``sync_to_async(thread_sensitive=True)``), so connections are the request's own.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types
from asgiref.sync import sync_to_async
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.shared.exceptions import MCPError

from ..memory import LongTermMemory
from ..names import TOOL_NAME

#: The one resource: the memory block the agent would be given at the start of a chat now.
BLOCK_URI = "memory://block"
SERVER_NAME = "agent-memory"


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("django-agent-memory")
    except PackageNotFoundError:  # a checkout on the path, not installed
        return "0"


def tool_of(memory: LongTermMemory) -> types.Tool:
    """``manage_memory`` as an MCP tool: the JSON Schema of ``tool_definition("json")``."""
    definition = memory.tool_definition("json")
    schema = {key: value for key, value in definition.items() if key not in ("title", "$schema")}
    return types.Tool(
        name=TOOL_NAME,
        title="Long-term memory",
        description=str(definition.get("description") or ""),
        input_schema=schema,
    )


def tool_result(answer: dict[str, Any]) -> types.CallToolResult:
    """A ``call_tool`` answer as the tool's result: the JSON text for the model, the same dict
    as structured content, and ``isError`` for an ``{"error": …}`` answer."""
    return types.CallToolResult(
        content=[types.TextContent(text=json.dumps(answer, ensure_ascii=False))],
        structured_content=answer,
        is_error="error" in answer,
    )


def build_server(memory: LongTermMemory, user: Any, origin: str) -> Server[Any]:
    """An MCP server acting as ``user`` only; ``origin`` is stored on the notes it writes."""

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[await sync_to_async(tool_of)(memory)])

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        if params.name != TOOL_NAME:
            return types.CallToolResult(
                content=[
                    types.TextContent(
                        text=f"Unknown tool {params.name!r}; this server offers {TOOL_NAME}."
                    )
                ],
                is_error=True,
            )
        run = sync_to_async(memory.call_tool, thread_sensitive=True)
        answer = await run(user, params.arguments or {}, origin=origin)
        return tool_result(answer)

    async def list_resources(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    uri=BLOCK_URI,
                    name="memory_block",
                    title="Memory block",
                    description=(
                        "What the agent remembers about this person now, as the block it is "
                        "given at the start of a chat."
                    ),
                    mime_type="text/plain",
                )
            ]
        )

    async def read_resource(
        ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        if str(params.uri) != BLOCK_URI:
            raise MCPError(
                types.INVALID_PARAMS,
                f"Unknown resource {params.uri!s}; this server offers {BLOCK_URI}.",
            )
        turn = await sync_to_async(memory.begin_turn, thread_sensitive=True)(user, None)
        return types.ReadResourceResult(
            contents=[
                types.TextResourceContents(uri=BLOCK_URI, mime_type="text/plain", text=turn.text)
            ]
        )

    return Server(
        SERVER_NAME,
        version=_version(),
        title="Long-term memory",
        instructions=memory.instructions,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
    )
