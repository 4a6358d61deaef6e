"""``statebound pack``: compress run stores (``run.sqlite`` -> ``run.sqlite.xz``), as the committed
records keep them; every reader opens the packed file (see :mod:`statebound.bench.packed`)."""

from __future__ import annotations

from pathlib import Path

import typer

from statebound.cli.app import app
from statebound.cli.errors import one_line_errors

__all__ = ["pack_command"]


@app.command("pack")
def pack_command(
    paths: list[Path] = typer.Argument(..., metavar="RUN_DIR...", help="Run directories, or folders holding them below."),
) -> None:
    """Write run.sqlite.xz beside each run's run.sqlite: a consistent snapshot (a run writing the store goes on), vacuumed and compressed. report, show, status and view read the packed file when run.sqlite is absent; eval --resume unpacks it.

    Example: statebound pack benchmarks/records/intercode-sql-smollm2"""
    from statebound.bench.packed import STORE_NAME, pack, run_dirs_below
    from statebound.bench.store import no_run_in

    with one_line_errors():
        runs = [run for path in paths for run in run_dirs_below(path) if (run / STORE_NAME).is_file()]
        if not runs:
            raise no_run_in(paths[0], below=True)
        for run in runs:
            plain, packed = pack(run)
            typer.echo(f"{run}: {_size(plain)} -> {_size(packed)}")


def _size(count: int) -> str:
    return f"{count / 1e6:.1f} MB" if count >= 1e5 else f"{count / 1e3:.0f} kB"
