"""``manage.py memory_mcp --user NAME``: one person's memory as an MCP server over stdio.

For a local MCP client (a desktop assistant, an IDE) that starts the server itself; the client
configuration names this command. It offers what the HTTP endpoint offers (the tool
``manage_memory`` and the resource ``memory://block``), acting as that person, with no token:
whoever can run ``manage.py`` can read the database anyway. Standard output carries only the
protocol; logs go to standard error.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ..people import person_named


class Command(BaseCommand):
    help = (
        "Serve one person's memory to a local MCP client over standard input and output "
        "(the tool manage_memory and the resource memory://block)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--user", required=True, help="The person's username (or primary key).")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            import anyio
            from mcp.server.stdio import stdio_server

            from agent_memory.mcp.server import build_server
        except ImportError as error:
            raise CommandError(
                f"The MCP SDK is missing ({error}): install the package's [mcp] extra, or "
                '"pip install mcp".'
            ) from error
        from agent_memory.site import get_memory

        person = find_person(options["user"])
        server = build_server(get_memory(), person, "mcp:stdio")

        async def serve() -> None:
            async with stdio_server() as (read_stream, write_stream):
                await server.run(read_stream, write_stream, server.create_initialization_options())

        anyio.run(serve)


def find_person(name: str) -> Any:
    """The active user with this username (or this primary key)."""
    found = person_named(name)
    if found is None or not getattr(found, "is_active", True):
        raise CommandError(
            f"No active user {name!r}: give an existing username (manage.py createsuperuser "
            "makes one)."
        )
    return found
