"""``statebound serve FLOW...``: flows as a durable service that Agent Protocol clients drive."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
from typing import Any

import typer

from statebound.cli.app import app
from statebound.cli.errors import fail, one_line_errors
from statebound.cli.listen import LOCAL, bind

__all__ = ["serve_command"]

TOKEN_VARIABLE = "STATEBOUND_SERVE_TOKEN"


def _serve_one(sock: socket.socket, flows: dict[str, Any], store: str, llm: Any, bound: str,
               hosts: tuple[str, ...], token: str | None, lease: float, limits: dict[str, Any]) -> None:
    import uvicorn

    from statebound.serve.app import build_app
    from statebound.serve.runner import Executor

    application = build_app(Executor(flows, store, llm=llm, lease=lease), bound=bound, hosts=hosts, token=token,
                            **limits)
    server = uvicorn.Server(uvicorn.Config(application, log_level="warning", timeout_graceful_shutdown=2, loop="asyncio"))
    server.run(sockets=[sock])


@app.command("serve")
def serve_command(
    flow_refs: list[str] = typer.Argument(..., metavar="FLOW...", help="Flows to serve: path.py:variable, or a bundled flow's name; each is an assistant named after the flow."),
    store: str = typer.Option("statebound-serve.db", "--store", help="Where threads and runs are kept: a SQLite file (one process) or a postgresql:// URL (several workers)."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to serve on; anything but localhost needs --auth-token."),
    port: int = typer.Option(8123, "--port", "-p", min=0, max=65535, help="Port to serve on (0: any free port)."),
    workers: int = typer.Option(1, "--workers", min=1, max=64, help="Worker processes (more than one needs a postgresql:// store)."),
    model: str | None = typer.Option(None, "--model", "-m", help="The model runs use (as statebound run takes it)."),
    model_option: list[str] = typer.Option([], "--model-option", help="Option for the model, key=value; repeatable."),
    auth_token: str | None = typer.Option(None, "--auth-token", help=f"A bearer token every request must carry (default: ${TOKEN_VARIABLE}); required to bind anything but localhost."),
    allow_host: list[str] = typer.Option([], "--allow-host", help="Another host name requests may name (besides localhost and the bound address); repeatable."),
    lease: float = typer.Option(10.0, "--lease", min=1.0, max=86400.0, help="Seconds a worker's claim on a run lasts unrenewed: a killed worker's runs go to another after it."),
    max_streams: int = typer.Option(256, "--max-streams", min=1, max=100_000, help="Event streams a worker keeps open at once; one more is refused (503) before anything is stored."),
    max_body: int = typer.Option(1 << 20, "--max-body", min=1024, max=1 << 30, help="Bytes a request body may have (413 beyond)."),
    mcp: bool = typer.Option(False, "--mcp", help="Also serve the flows as MCP tools at /mcp (streamable HTTP; docs/mcp.md)."),
) -> None:
    """Serve flows over HTTP as the Agent Protocol that LangGraph's SDK speaks: threads, runs in the background, runs.wait, runs.stream (SSE), interrupts answered with Command(resume=...), thread state, history, copy and state updates. Every accepted run is stored before it is answered and finishes after a crash. docs/serve.md lists the endpoints.

    Example: statebound serve docs/examples/tickets.py:scoped --store runs/serve.db

    Example (two workers over PostgreSQL): statebound serve flows.py:flow --store postgresql://me@db/flows --workers 2"""
    from statebound.cli.run import load_flow, open_flow_model

    token = auth_token or os.environ.get(TOKEN_VARIABLE) or None
    with one_line_errors():
        if host not in LOCAL and token is None:
            fail(f"serving on {host} exposes the flows to the network: give --auth-token (or ${TOKEN_VARIABLE})")
        postgres = store.startswith(("postgresql://", "postgres://"))
        if workers > 1 and not postgres:
            fail("--workers above 1 needs a postgresql:// store: a SQLite file is written by one process")
        flows = {}
        for ref in flow_refs:
            flow = load_flow(ref)
            if flow.name in flows:
                fail(f"two flows are named {flow.name!r}: an assistant is named after its flow")
            flows[flow.name] = flow
        llm = open_flow_model(model, model_option)
    try:
        import uvicorn  # noqa: F401
    except ImportError as error:
        fail(f"statebound serve needs {error.name or 'its web stack'}: pip install 'statebound[view]'")
    sock = bind(host, port, shared=workers > 1, listen=workers == 1)
    hosts = tuple(allow_host)
    limits = {"max_streams": max_streams, "max_body": max_body, "mcp": mcp}
    shown = f"[{host}]" if ":" in host else host
    typer.echo(f"statebound serve: http://{shown}:{sock.getsockname()[1]} ({', '.join(flows)}; store {store}; "
               f"{workers} worker{'s' if workers > 1 else ''}; Ctrl+C stops)")
    if workers == 1:
        _serve_one(sock, flows, store, llm, host, hosts, token, lease, limits)
        return
    children = []
    for _ in range(workers):
        pid = os.fork()
        if pid == 0:  # a worker: its own socket, event loop, database connections and runs
            try:
                own = bind(host, sock.getsockname()[1], shared=True)
                sock.close()
                _serve_one(own, flows, store, llm, host, hosts, token, lease, limits)
            finally:
                os._exit(0)
        children.append(pid)
    sock.close()  # it only held the port: each worker listens on its own socket

    def stop_workers(signum: int, frame: object) -> None:
        for child in children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGTERM)

    signal.signal(signal.SIGTERM, stop_workers)
    signal.signal(signal.SIGINT, stop_workers)
    for pid in children:
        os.waitpid(pid, 0)
