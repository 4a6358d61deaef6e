"""``statebound mcp FLOW...``: serve flows as MCP tools (stdio, or ``--http`` on this machine);
``statebound mcp list SERVER``: the tools an MCP server offers (docs/mcp.md)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import typer
from typer.core import TyperGroup

from statebound.cli.app import app
from statebound.cli.errors import one_line_errors
from statebound.cli.run import FLOW_HELP, MCP_CONFIG_HELP, load_flow, mcp_servers, open_flow_model
from statebound.errors import DefinitionError

__all__ = ["list_command", "serve_command"]


class _ServeByDefault(TyperGroup):
    """``statebound mcp FLOW...`` means ``statebound mcp serve FLOW...``."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            args = ["serve", *args]
        return super().parse_args(ctx, args)


mcp_app = typer.Typer(cls=_ServeByDefault, no_args_is_help=True,
                      help="MCP both ways: serve flows as MCP tools (statebound mcp FLOW), list a server's tools "
                           "(statebound mcp list SERVER).")
app.add_typer(mcp_app, name="mcp")

def _default_store() -> str:
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "statebound"
    cache.mkdir(parents=True, exist_ok=True)
    return str(cache / "mcp-threads.sqlite")


@mcp_app.command("serve")
def serve_command(
    flow_refs: list[str] = typer.Argument(..., metavar="FLOW...", help=FLOW_HELP + " (one tool each)."),
    store_path: str | None = typer.Option(None, "--store", help="Where the runs are stored as threads: a SQLite file or a postgresql:// URL (default: ~/.cache/statebound/mcp-threads.sqlite)."),
    model: str | None = typer.Option(None, "--model", "-m", help="The flows' model, as for statebound run (default: $STATEBOUND_MODEL, the config file's model, smollm2)."),
    model_option: list[str] = typer.Option([], "--model-option", help="Option for the model, key=value; repeatable."),
    mcp_config: Path | None = typer.Option(None, "--mcp-config", help=MCP_CONFIG_HELP),
    http: bool = typer.Option(False, "--http", help="Serve over streamable HTTP at http://127.0.0.1:PORT/mcp instead of stdio."),
    port: int = typer.Option(8766, "--port", "-p", min=0, max=65535, help="With --http: the port (0: any free one)."),
) -> None:
    """Serve flows as MCP tools: each flow a tool whose input is its task (and variables) and whose output is the run's result; a run that pauses asks the client (input_required, an elicitation, or a continuation: call again with thread and input); progress says each state entered. Over stdio by default; --http binds 127.0.0.1 only.

    Example: statebound mcp my_flows.py:flow --store runs.db"""
    import asyncio

    with one_line_errors():
        flows = [load_flow(ref) for ref in flow_refs]
        llm = open_flow_model(model, model_option)
        from statebound.flow.live import open_checkpointer

        store = open_checkpointer(store_path or _default_store())
    from statebound.mcp.flow_server import http_app, serve_stdio

    with mcp_servers(mcp_config), one_line_errors():
        try:
            if not http:
                print(f"statebound mcp: serving {', '.join(f.name for f in flows)} over stdio; runs in {store.where}",
                      file=sys.stderr)
                asyncio.run(serve_stdio(flows, store, llm=llm))
                return
            import uvicorn

            from statebound.cli.listen import bind

            sock = bind("127.0.0.1", port)
            print(f"statebound mcp: http://127.0.0.1:{sock.getsockname()[1]}/mcp serves "
                  f"{', '.join(f.name for f in flows)}; runs in {store.where} (Ctrl+C stops)", file=sys.stderr, flush=True)
            server = uvicorn.Server(uvicorn.Config(http_app(flows, store, llm=llm), log_level="warning"))
            server.run(sockets=[sock])
        finally:
            store.close()


@mcp_app.command("list")
def list_command(
    server: str = typer.Argument(..., metavar="SERVER", help="A server named in --mcp-config, a streamable-HTTP URL, or a command that starts one (its arguments after it)."),
    args: list[str] = typer.Argument(None, metavar="[ARGS]...", help="The command's arguments (put -- before the first if it starts with -)."),
    mcp_config: Path | None = typer.Option(None, "--mcp-config", help=MCP_CONFIG_HELP),
) -> None:
    """Print the tools an MCP server offers: each with whether a call may run twice (from its annotations), its parameters and description.

    Example: statebound mcp list filesystem --mcp-config mcp.json

    Example: statebound mcp list npx -- -y @modelcontextprotocol/server-filesystem /tmp"""
    import asyncio

    with one_line_errors():
        from statebound.mcp import MCPServer, load_servers

        if mcp_config is not None and server in (servers := load_servers(mcp_config)):
            found = servers[server]
        elif server.startswith(("http://", "https://")):
            found = MCPServer.http(server, server)
        elif mcp_config is not None and not args:
            raise DefinitionError(f"{mcp_config} has no server {server!r} (it has {', '.join(servers) or 'none'})")
        else:
            found = MCPServer.stdio(Path(server).name, server, *(args or ()))
        typer.echo(asyncio.run(_listing(found)))


async def _listing(server: Any) -> str:
    from statebound.mcp.connection import Connection
    from statebound.mcp.servers import allowed
    from statebound.mcp.tools import repeatable

    async with Connection(server) as connection:
        tools = await connection.tools()
        version = connection.protocol_version
    usable = set(allowed(server, [tool.name for tool in tools]))
    lines = [f"{server.name} (MCP {version}): {len(tools)} tools"]
    for tool in tools:
        schema = tool.input_schema or {}
        required = set(schema.get("required") or ())
        params = ", ".join(f"{name}{'' if name in required else '?'}: {spec.get('type', 'any')}"
                           for name, spec in (schema.get("properties") or {}).items())
        kind = "read-only" if tool.annotations and tool.annotations.read_only_hint else (
            "repeatable" if repeatable(tool.annotations) else "not repeatable")
        shut = "" if tool.name in usable else ", not in its allow list"
        about = " ".join((tool.description or tool.title or "").split())
        lines.append(f"  {tool.name}({params})  [{kind}{shut}]")
        if about:
            lines.append(f"      {about[:200]}")
    return server.redact("\n".join(lines))
