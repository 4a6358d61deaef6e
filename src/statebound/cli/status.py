"""``statebound status``: how far runs have got and the compute they still need."""

from __future__ import annotations

import time
from pathlib import Path

import typer

from statebound.cli.app import app


@app.command("status")
def status_command(
    paths: list[Path] = typer.Argument(None, metavar="[PATH]...", help="Run directories made by 'statebound eval', or folders holding them (default: runs, where eval writes)."),
    workers: int = typer.Option(1, "--workers", "-j", min=1, max=1024, help="Workers the rest will run on (divides the time left)."),
    wide: bool = typer.Option(False, "--wide", help="One table with every column, however wide (for a pager)."),
) -> None:
    """Episodes stored, crashed and left per agent of the runs in PATHS (default: runs), and the time the rest needs at the pace so far.

    An agent that has not finished an episode yet is estimated at the pace of its run's other agents (marked ~). Piped, the table is tab-separated.

    Example: statebound status runs/ -j 2"""
    from rich.console import Console

    from statebound.bench.store import RunNotFound
    from statebound.cli.errors import fail
    from statebound.errors import StateboundError
    from statebound.report.inert import inert
    from statebound.report.status import find_runs, run_progress, status_section
    from statebound.report.terminal import inert_section, print_sections

    try:
        progress, skipped = [], []
        for run_dir in find_runs(paths or [Path("runs")]):
            try:
                progress += run_progress(run_dir)
            except RunNotFound as exc:  # a store whose run never started: the others still count
                skipped.append(str(exc))
        if not progress:
            raise RunNotFound("; ".join(skipped))
    except StateboundError as exc:
        fail(str(exc))
    for note in skipped:
        typer.echo(f"skipped: {inert(note, one_line=True)}", err=True)
    section = status_section(progress, workers=workers, now=time.time())
    console = Console()
    if not console.is_terminal:  # tab-separated, for scripts
        shown = inert_section(section)
        rows = [shown.header, *shown.rows, *([shown.footer] if shown.footer else [])]
        typer.echo("\n".join("\t".join(row) for row in rows))
        return
    print_sections([section], console=console, wide=wide)
