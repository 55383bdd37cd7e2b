"""Reverie's MCP server (needs the ``server`` extra): ``reverie mcp`` over stdio, and
``/mcp`` over streamable HTTP under ``reverie serve``."""

from .server import MCP_TOOLS, build_server, owner_resolver

__all__ = ["MCP_TOOLS", "build_server", "owner_resolver", "serve_stdio"]


def serve_stdio(home: object = None) -> None:
    """Serve MCP over this process's stdin and stdout, as the home's owner, until EOF."""
    import anyio
    from mcp.server.stdio import stdio_server

    from reverie.api import Reverie

    rv = Reverie(home)  # type: ignore[arg-type]
    server = build_server(rv, owner_resolver(rv))

    async def main() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    try:
        anyio.run(main)
    finally:
        rv.close()
