"""``statebound status``: how far runs have got and the compute they still need."""

from __future__ import annotations

import time
from pathlib import Path

import typer

from statebound.cli.app import app


@app.command("status")
def status_command(
    paths: list[Path] = typer.Argument(..., help="Run directories made by 'statebound eval', or folders holding them."),
    workers: int = typer.Option(1, "--workers", "-j", min=1, help="Workers the rest will run on (divides the time left)."),
) -> None:
    """Episodes stored, crashed and left per agent of the runs in PATHS, and the time the rest needs at the pace so far."""
    from rich.console import Console
    from rich.table import Table

    from statebound.errors import StateboundError
    from statebound.report.status import find_runs, run_progress, status_rows

    try:
        progress = [item for run_dir in find_runs(paths) for item in run_progress(run_dir)]
    except StateboundError as exc:
        typer.secho(f"error: {exc}", fg=typer.colors.RED, err=True)
        raise typer.Exit(2) from None
    header, body = status_rows(progress, workers=workers, now=time.time())
    console = Console()
    if not console.is_terminal:  # tab-separated, for scripts
        typer.echo("\n".join("\t".join(row) for row in [header, *body]))
        return
    table = Table()
    for name in header:
        text = name in ("run", "benchmark", "agent", "model")
        table.add_column(name, justify="left" if text else "right", no_wrap=name != "run")
    for row in body:
        table.add_row(*row)
    console.print(table)
