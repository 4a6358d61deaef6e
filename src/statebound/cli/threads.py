"""``statebound threads STORE [THREAD]``: the threads of a live-flow store, or one thread's
checkpoints; ``--fork SEQ [--edit INDEX TEXT]`` starts a new thread from one of them (from a child
run's thread: a new top-level thread that continues inside the child).

The store is opened read-only (a file that is not a checkpoint store is refused, saying what it
is); only ``--fork`` writes, and only to a checkpoint store."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import typer

from statebound.cli.app import app
from statebound.cli.errors import one_line_errors
from statebound.report.inert import CELL_LIMIT, inert, inert_text
from statebound.web.forms import MAX_INT

if TYPE_CHECKING:
    from rich.console import RenderableType
    from rich.table import Table
    from rich.text import Text

    from statebound.flow.history import Entry
    from statebound.flow.live import Checkpointer

__all__ = ["threads_command"]


def _clip(text: str, width: int = 60) -> str:
    flat = " ".join(text[: width * 4].split())  # the rest would be cut anyway
    return flat if len(flat) <= width else flat[: width - 3] + "..."


def _cells(*values: str) -> list[Text]:
    """Text from the store as table cells: never read as markup, control characters escaped."""
    return [inert_text(value, limit=CELL_LIMIT, one_line=True) for value in values]


def _when(stamp: float) -> str:
    return time.strftime("%m-%d %H:%M", time.localtime(stamp))


def _added(entries: tuple[Entry, ...], first: int) -> str:
    """The entries a checkpoint added, each with its history index (what --edit takes)."""
    return "; ".join(f"#{first + i} {e.source}: {_clip(e.content, 40)!r}" for i, e in enumerate(entries))


def _thread_table(store: Checkpointer, width: int) -> RenderableType:
    """One line per thread, names and figures whole (the update time left out when they need its
    room): with the task cut to the width left, or, when there is too little, the tasks listed
    under the table (``width``: the terminal's columns)."""
    from rich import box
    from rich.console import Console, Group
    from rich.measure import Measurement
    from rich.table import Table
    from rich.text import Text

    threads = store.threads()
    columns = {"thread": [i.thread for i in threads], "flow": [i.flow for i in threads],
               "state": [i.state for i in threads], "turn": [str(i.turn) for i in threads],
               "status": [i.status for i in threads], "checkpoints": [str(i.checkpoints) for i in threads]}
    if any(info.parent for info in threads):
        columns["forked from"] = [info.parent or "" for info in threads]
    columns["updated"] = [_when(info.updated) for info in threads]

    def table(shown: dict[str, list[str]], task_width: int = 0) -> Table:
        made = Table(title=inert_text(f"Threads in {store.where}", limit=CELL_LIMIT, one_line=True),
                     box=box.SIMPLE_HEAD, collapse_padding=True)
        for header, cells in shown.items():
            made.add_column(header, justify="right" if header in ("turn", "checkpoints") else "left", no_wrap=True,
                            min_width=max(map(len, [header, *cells])))
        if task_width:
            made.add_column("task", no_wrap=True, overflow="ellipsis", width=task_width)
        for index, info in enumerate(threads):
            made.add_row(*_cells(*(cells[index] for cells in shown.values()),
                                 *([_clip(info.task, 200)] if task_width else [])))
        return made

    def room(shown: dict[str, list[str]]) -> int:
        wide = Console(width=1_000_000)
        return width - Measurement.get(wide, wide.options, table(shown)).maximum - 3

    if room(columns) < 0:
        columns.pop("updated")
    left = room(columns)
    if left >= 12:
        return table(columns, min(left, max([len(_clip(i.task, 200)) for i in threads] + [4])))
    tasks = [inert_text(f"{info.thread}: {_clip(info.task, 200)}", limit=CELL_LIMIT, one_line=True) for info in threads]
    return Group(table(columns), Text("tasks:", style="bold"), *tasks)


def _checkpoint_table(store: Checkpointer, thread: str) -> Table:
    from rich.table import Table

    table = Table(title=inert_text(f"Checkpoints of {thread} (a new thread from one: statebound threads {store.where} "
                                   f"{thread} --fork SEQ [--edit INDEX TEXT])", limit=CELL_LIMIT, one_line=True),
                  caption="stored by: the thread that stored the checkpoint, when it is not this one (a fork's "
                          "first checkpoints are its parent's)")
    for column in ("seq", "kind", "state", "turn", "status", "stored by", "added (#history index)"):
        table.add_column(column, justify="right" if column in ("seq", "turn") else "left")
    entries = 0
    for point in store.checkpoints(thread):
        table.add_row(*_cells(str(point.seq), point.kind, point.state, str(point.turn), point.status,
                              "" if point.thread == thread else point.thread),
                      inert_text(_added(point.added, entries), one_line=True))  # short words: no cut
        entries += len(point.added)
    return table


def _fork(store_path: str, thread: str, at: int, edit: tuple[int, str] | None, name: str | None,
          sets: list[str]) -> str:
    """Start a new thread from ``thread``'s checkpoint ``at``; the line that says how to go on."""
    from statebound.flow.live import fork_thread, open_checkpointer
    from statebound.flow.live.fold import fold
    from statebound.flow.live.forking import parse_sets
    from statebound.flow.live.hints import run_on
    from statebound.flow.live.session import thread_models

    new = fork_thread(store_path, thread, at=at, edit=edit, name=name, sets=parse_sets(sets))
    with open_checkpointer(store_path, read_only=True) as store:
        record = store.record(new)
        paused = fold(store.lineage(new), "").kind == "pause"
        models = thread_models(store, new)
    assert record is not None  # just written
    changed = [f"history entry #{edit[0]} edited"] if edit is not None else []
    changed += [f"{pair.partition('=')[0].strip()} set" for pair in sets]
    what = f" ({', '.join(changed)})" if changed else ""
    made = f"a new thread from {thread} at checkpoint {at}{what}"
    if record.parent is not None and record.parent != thread:  # a child's fork: its top-level thread's
        made = (f"a new thread from {record.parent} at checkpoint {record.parent_seq}, which continues inside "
                f"{new + thread[len(record.parent):]}, forked from {thread} at checkpoint {at}{what}")
    return f"{new}: {made}; run it on with\n  {run_on(record, store_path, paused=paused, model=models[-1] if models else None)}"


@app.command("threads")
def threads_command(
    store_path: str = typer.Argument(..., metavar="STORE", help="A SQLite file or a postgresql:// URL."),
    thread: str | None = typer.Argument(None, help="Show this thread's checkpoints."),
    fork: int | None = typer.Option(None, "--fork", metavar="SEQ", min=0, max=MAX_INT, help="Start a new thread from THREAD's checkpoint SEQ; prints the command that runs it on."),
    edit: tuple[int, str] | None = typer.Option(None, "--edit", metavar="INDEX TEXT", help="With --fork: give history entry INDEX (the #index the checkpoints show) the text TEXT, e.g. an edited model reply."),
    name: str | None = typer.Option(None, "--name", help="With --fork: the new thread's name (default THREAD-at-SEQ; for a child run's thread, a top-level name TOP-at-PATH-SEQ)."),
    sets: list[str] = typer.Option([], "--set", metavar="FIELD=JSON", help="With --fork: set a flow variable in the new thread (JSON, or a bare text for a string); checked against the variables' type; repeatable."),
) -> None:
    """List the threads of a store (state, turn, status), or one thread's checkpoints, or fork a thread from one of them. The store is only read (a file that is not a checkpoint store is refused); --fork adds a thread.

    Example: statebound threads runs/live.sqlite t1

    Example (a new thread from checkpoint 3, with entry 2 rewritten): statebound threads runs/live.sqlite t1 --fork 3 --edit 2 "Publish it."

    Example (a new thread from checkpoint 3, with a flow variable set): statebound threads runs/live.sqlite t1 --fork 3 --set severity='"high"'

    Example (from a branch's checkpoint 4: a new top-level thread that runs on inside the branch): statebound threads runs/live.sqlite t1/Research.1/b2 --fork 4
    """
    from pathlib import Path

    from rich.console import Console

    from statebound.errors import CheckpointError
    from statebound.flow.live import missing_thread, open_checkpointer, refuse_connection_string

    with one_line_errors():
        refuse_connection_string(store_path)
        if "://" not in store_path and not Path(store_path).is_file():
            raise CheckpointError(f"no store at {store_path}; `statebound run FLOW --store PATH --thread ID` makes one")
        if fork is None and (edit is not None or name is not None or sets):
            flag = "--edit" if edit is not None else "--name" if name is not None else "--set"
            raise CheckpointError(f"{flag} goes with --fork SEQ (statebound threads {store_path} THREAD --fork SEQ)")
        if edit is not None and not 0 <= edit[0] <= MAX_INT:
            raise CheckpointError(f"--edit INDEX must be a history index from 0 to {MAX_INT}, not {edit[0]}")
        if fork is not None:
            if thread is None:
                raise CheckpointError(f"--fork needs the THREAD to fork: statebound threads {store_path} THREAD --fork {fork}")
            typer.echo(inert(_fork(store_path, thread, fork, edit, name, sets)))
            return
        with open_checkpointer(store_path, read_only=True) as store:
            if thread is not None and store.record(thread) is None:
                raise CheckpointError(missing_thread(store, thread))
            console = Console()
            table = _thread_table(store, console.width) if thread is None else _checkpoint_table(store, thread)
    console.print(table)
