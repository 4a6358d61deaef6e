"""``statebound report``: tables, comparisons and plots over one or more run directories."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from typer.core import TyperCommand

from statebound.cli.app import app

if TYPE_CHECKING:
    from statebound.report.tables import Report


class _WithGlossary(TyperCommand):
    """``statebound report --help`` ends with what every column of the report means."""

    def format_help(self, ctx: Any, formatter: Any) -> None:  # typer's own click types
        from statebound.report.sections import standard_glossary

        lines = [f"{header}: {note}" for header, note in standard_glossary()]
        self.epilog = ("Columns (a benchmark's own columns are explained in report.md and report.html):\n\n"
                       + "\n\n".join(lines))
        super().format_help(ctx, formatter)


@app.command("report", cls=_WithGlossary)
def report_command(
    run_dirs: list[Path] = typer.Argument(..., metavar="RUN_DIR", help="Run directories made by 'statebound eval'."),
    out: Path | None = typer.Option(None, "--out", "-o", help="Where to write (default: the run directory, or runs/compare-<timestamp> for several)."),
    by: list[str] = typer.Option([], "--by", help="Break down by this meta key (default: hardness/task_type when present); repeatable."),
    length_bin: int | None = typer.Option(None, "--length-bin", min=1, max=1_000_000, help="Bin width in steps for the SR-vs-length plot."),
    no_plots: bool = typer.Option(False, "--no-plots", help="Skip the plots."),
    shared_tasks: bool = typer.Option(False, "--shared-tasks", help="Only the tasks every run has (a run on a sample beside a full record)."),
    wide: bool = typer.Option(False, "--wide", help="Print each table whole, however wide (default: fitted to the terminal)."),
    explain: bool = typer.Option(False, "--explain", help="Print what each column means under the tables (it is always written into report.md and report.html)."),
    informative: bool = typer.Option(False, "--informative", help="For InterCode runs stored before SR % (informative): work out which tasks doing nothing solves by running each gold on a fresh database or sandbox (about 35 s for Bash's 200 tasks); the stores are not changed."),
    view_url: str = typer.Option("http://127.0.0.1:8765/", "--view-url", help="Where report.html's task grid links each episode: statebound view started on the same RUN_DIRS (its default address)."),
) -> None:
    """Print and write (Markdown, CSV, JSON, PNG/SVG, report.html) the papers' tables for RUN_DIRS side by side.

    In a terminal each table fits its width: a key column with one value (one model) moves to the title, and columns that do not fit go to a second table (--wide: one table). report.md and report.html end with what every column means (--explain prints it too).

    Example: statebound report runs/sql

    Example (two runs on the tasks both ran): statebound report runs/sql runs/sql-free --shared-tasks --out runs/compare"""
    from statebound.cli.errors import fail, output_dir
    from statebound.errors import StateboundError
    from statebound.report.finish import finish_run
    from statebound.report.tables import print_report

    out_dir = out or (run_dirs[0] if len(run_dirs) == 1 else Path("runs") / f"compare-{time.strftime('%Y%m%d-%H%M%S')}")
    try:
        output_dir(out_dir, create=False)  # written once the runs are read
        with _GoldProgress() as progress:
            report, files = finish_run(
                run_dirs, out_dir=out_dir, breakdown_keys=by or None, bin_width=length_bin, plots=not no_plots,
                shared_tasks=shared_tasks, informative=informative, informative_progress=progress.update,
                view_url=view_url,
            )
    except StateboundError as exc:
        fail(str(exc))
    print_report(report, wide=wide, explain=explain, written_to=out_dir)
    if not informative and _informative_blank(report):
        typer.secho("SR % (informative) is blank for runs stored before it; --informative works it out.",
                    fg=typer.colors.YELLOW, err=True)
    typer.echo(f"wrote {len(files)} files into {out_dir}")


class _GoldProgress:
    """A bar on stderr over the gold runs of ``--informative``, shown once the first one is done."""

    def __init__(self) -> None:
        self._progress: Any = None
        self._tasks: dict[str, Any] = {}

    def __enter__(self) -> _GoldProgress:
        return self

    def update(self, benchmark: str, done: int, total: int) -> None:
        if self._progress is None:
            from rich.console import Console
            from rich.progress import Progress

            self._progress = Progress(console=Console(stderr=True), transient=True)
            self._progress.start()
        if benchmark not in self._tasks:
            self._tasks[benchmark] = self._progress.add_task(f"{benchmark}: gold runs", total=total)
        self._progress.update(self._tasks[benchmark], completed=done)

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()


def _informative_blank(report: Report) -> bool:
    """Whether the report has SR % (informative) and some row of it is blank."""
    from statebound.contract.columns import INFORMATIVE_SUCCESS

    return INFORMATIVE_SUCCESS in report.columns and any(
        row.extra.get(INFORMATIVE_SUCCESS.key) is None for row in report.main)
