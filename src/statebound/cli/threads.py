"""``statebound threads STORE [THREAD]``: the threads of a live-flow store, or one thread's
checkpoints (to pick one to fork from: ``store.fork(thread, at=SEQ, ...)``)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import typer

from statebound.cli.app import app
from statebound.cli.errors import one_line_errors

if TYPE_CHECKING:
    from rich.table import Table

    from statebound.flow.history import Entry
    from statebound.flow.live import Checkpointer

__all__ = ["threads_command"]


def _clip(text: str, width: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 3] + "..."


def _when(stamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(stamp))


def _added(entries: tuple[Entry, ...]) -> str:
    return "; ".join(f"{e.source}: {_clip(e.content, 40)!r}" for e in entries)


def _thread_table(store: Checkpointer) -> Table:
    from rich.table import Table

    table = Table(title=f"Threads in {store.where}")
    for column in ("thread", "flow", "state", "turn", "status", "checkpoints", "forked from", "updated", "task"):
        table.add_column(column, justify="right" if column in ("turn", "checkpoints") else "left")
    for info in store.threads():
        table.add_row(info.thread, info.flow, info.state, str(info.turn), info.status, str(info.checkpoints),
                      info.parent or "", _when(info.updated), _clip(info.task))
    return table


def _checkpoint_table(store: Checkpointer, thread: str) -> Table:
    from rich.table import Table

    table = Table(title=f"Checkpoints of {thread} (fork from one: store.fork({thread!r}, at=SEQ, thread=...))")
    for column in ("seq", "kind", "state", "turn", "status", "stored by", "added"):
        table.add_column(column, justify="right" if column in ("seq", "turn") else "left")
    for point in store.checkpoints(thread):
        table.add_row(str(point.seq), point.kind, point.state, str(point.turn), point.status,
                      "" if point.thread == thread else point.thread, _added(point.added))
    return table


@app.command("threads")
def threads_command(
    store_path: str = typer.Argument(..., metavar="STORE", help="A SQLite file or a postgresql:// URL."),
    thread: str | None = typer.Argument(None, help="Show this thread's checkpoints."),
) -> None:
    """List the threads of a store (state, turn, status), or one thread's checkpoints.

    Example: statebound threads runs/live.sqlite t1"""
    from pathlib import Path

    from rich.console import Console

    from statebound.errors import CheckpointError
    from statebound.flow.live import open_checkpointer

    with one_line_errors():
        if "://" not in store_path and not Path(store_path).is_file():
            raise CheckpointError(f"no store at {store_path}; `statebound run FLOW --store PATH --thread ID` makes one")
        with open_checkpointer(store_path) as store:
            table = _thread_table(store) if thread is None else _checkpoint_table(store, thread)
    Console().print(table)
