"""``statebound view PATH...``: browse runs and live-flow threads in a local web app, behind
:class:`~statebound.web.HostGuard` (only its own host names, bounded bodies)."""

from __future__ import annotations

import typer

from statebound.cli.app import app
from statebound.cli.errors import fail, one_line_errors
from statebound.cli.listen import LOCAL, bind

__all__ = ["view_command"]



@app.command("view")
def view_command(
    paths: list[str] = typer.Argument(..., help="Run directories (or folders holding them) and live-flow stores."),
    port: int = typer.Option(8765, "--port", "-p", min=0, max=65535, help="Port to serve on (0: any free port)."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to serve on; anything but localhost exposes the viewer to the network."),
    allow_host: list[str] = typer.Option([], "--allow-host", metavar="NAME", help="Another host name the viewer answers to (it answers only to 127.0.0.1, localhost, ::1 and --host; others get 421); repeatable."),
) -> None:
    """Browse runs and live-flow threads in a local web app: each run's results and its tasks x agents grid, every episode turn by turn (actions as run, observations, choices with their scores, gold vs obtained), two agents side by side, threads with their checkpoints. Stores are only read; reload to see episodes stored since.

    Example: statebound view runs/sql runs/live.sqlite --port 8765"""
    with one_line_errors():
        from statebound.view.sources import find_sources

        sources = find_sources(paths)
    try:
        import uvicorn

        from statebound.view.app import build_app
        from statebound.web import HostGuard, allowed_hosts
    except ImportError as error:
        fail(f"statebound view needs {error.name or 'its web stack'}: pip install 'statebound[view]'")

    sock = bind(host, port)
    shown = f"[{host}]" if ":" in host else host
    typer.echo(f"statebound view: http://{shown}:{sock.getsockname()[1]}/ "
               f"({len(sources.runs)} runs, {len(sources.stores)} stores; Ctrl+C stops)")
    if host not in LOCAL:
        typer.secho(f"warning: serving on {host}, not localhost: anyone who can reach this machine can read these "
                    "runs (no login); it answers to the names 127.0.0.1, localhost, ::1, the address and those "
                    "given with --allow-host", fg=typer.colors.YELLOW, err=True)
    guarded = HostGuard(build_app(sources), hosts=allowed_hosts(host, allow_host))
    server = uvicorn.Server(uvicorn.Config(guarded, log_level="warning"))
    server.run(sockets=[sock])
