"""``statebound threads STORE [THREAD]``: the threads of a live-flow store, or one thread's
checkpoints; ``--fork SEQ [--edit INDEX TEXT]`` starts a new thread from one of them.

The store is opened read-only (a file that is not a checkpoint store is refused, saying what it
is); only ``--fork`` writes, and only to a checkpoint store."""

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


def _added(entries: tuple[Entry, ...], first: int) -> str:
    """The entries a checkpoint added, each with its history index (what --edit takes)."""
    return "; ".join(f"#{first + i} {e.source}: {_clip(e.content, 40)!r}" for i, e in enumerate(entries))


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

    table = Table(title=f"Checkpoints of {thread} (a new thread from one: statebound threads {store.where} "
                        f"{thread} --fork SEQ [--edit INDEX TEXT])")
    for column in ("seq", "kind", "state", "turn", "status", "stored by", "added (#history index)"):
        table.add_column(column, justify="right" if column in ("seq", "turn") else "left")
    entries = 0
    for point in store.checkpoints(thread):
        table.add_row(str(point.seq), point.kind, point.state, str(point.turn), point.status,
                      "" if point.thread == thread else point.thread, _added(point.added, entries))
        entries += len(point.added)
    return table


def _fork(store_path: str, thread: str, at: int, edit: tuple[int, str] | None, name: str | None) -> str:
    """Start a new thread from ``thread``'s checkpoint ``at``; the line that says how to go on."""
    from statebound.flow.live import fork_thread, open_checkpointer

    new = fork_thread(store_path, thread, at=at, edit=edit, name=name)
    with open_checkpointer(store_path, read_only=True) as store:
        record = store.record(new)
    flow = record.flow if record is not None else "FLOW"
    edited = f", history entry #{edit[0]} edited" if edit is not None else ""
    return (f"{new}: a new thread from {thread} at checkpoint {at}{edited}; run it on with "
            f"statebound run {flow} --store {store_path} --thread {new} --resume")


@app.command("threads")
def threads_command(
    store_path: str = typer.Argument(..., metavar="STORE", help="A SQLite file or a postgresql:// URL."),
    thread: str | None = typer.Argument(None, help="Show this thread's checkpoints."),
    fork: int | None = typer.Option(None, "--fork", metavar="SEQ", min=0, help="Start a new thread from THREAD's checkpoint SEQ (then: statebound run FLOW --store STORE --thread NEW --resume)."),
    edit: tuple[int, str] | None = typer.Option(None, "--edit", metavar="INDEX TEXT", help="With --fork: give history entry INDEX (the #index the checkpoints show) the text TEXT, e.g. an edited model reply."),
    name: str | None = typer.Option(None, "--name", help="With --fork: the new thread's name (default THREAD-at-SEQ)."),
) -> None:
    """List the threads of a store (state, turn, status), or one thread's checkpoints, or fork a thread from one of them. The store is only read (a file that is not a checkpoint store is refused); --fork adds a thread.

    Example: statebound threads runs/live.sqlite t1

    Example (a new thread from checkpoint 3, with entry 2 rewritten): statebound threads runs/live.sqlite t1 --fork 3 --edit 2 "Publish it."
    """
    from pathlib import Path

    from rich.console import Console

    from statebound.errors import CheckpointError
    from statebound.flow.live import missing_thread, open_checkpointer, refuse_connection_string

    with one_line_errors():
        refuse_connection_string(store_path)
        if "://" not in store_path and not Path(store_path).is_file():
            raise CheckpointError(f"no store at {store_path}; `statebound run FLOW --store PATH --thread ID` makes one")
        if fork is None and (edit is not None or name is not None):
            raise CheckpointError(f"{'--edit' if edit is not None else '--name'} goes with --fork SEQ "
                                  f"(statebound threads {store_path} THREAD --fork SEQ)")
        if fork is not None:
            if thread is None:
                raise CheckpointError(f"--fork needs the THREAD to fork: statebound threads {store_path} THREAD --fork {fork}")
            typer.echo(_fork(store_path, thread, fork, edit, name))
            return
        with open_checkpointer(store_path, read_only=True) as store:
            if thread is not None and store.record(thread) is None:
                raise CheckpointError(missing_thread(store, thread))
            table = _thread_table(store) if thread is None else _checkpoint_table(store, thread)
    Console().print(table)
