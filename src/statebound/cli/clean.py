"""``statebound clean``: remove what killed runs left behind (Bash sandbox folders and mounts)."""

from __future__ import annotations

import typer

from statebound.cli.app import app

__all__ = ["clean_command"]


@app.command("clean")
def clean_command() -> None:
    """Remove the Bash sandboxes (folders in the temp dir, their tmpfs mounts and cgroups) of runs that no longer run, e.g. after kill -9. Sandboxes of running runs are kept.

    Example: statebound clean"""
    from statebound.envs.bash.leftovers import remove_leftovers

    removed = remove_leftovers()
    for path in removed:
        typer.echo(f"removed {path}")
    typer.echo(f"{len(removed)} leftover sandbox{'es' if len(removed) != 1 else ''} removed")
