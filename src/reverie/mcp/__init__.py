"""Reverie's MCP server (needs the ``server`` extra): ``reverie mcp`` over stdio, and
``/mcp`` over streamable HTTP under ``reverie serve``."""

from reverie.api import Reverie

from .server import MCP_TOOLS, build_server, owner_resolver

__all__ = ["MCP_TOOLS", "build_server", "owner_resolver", "serve_stdio"]


def serve_stdio(rv: Reverie) -> None:
    """Serve MCP over this process's stdin and stdout, as ``rv``'s owner, until EOF; closes
    ``rv`` then."""
    import anyio
    from mcp.server.stdio import stdio_server

    server = build_server(rv, owner_resolver(rv))

    async def main() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    try:
        anyio.run(main)
    finally:
        rv.close()
