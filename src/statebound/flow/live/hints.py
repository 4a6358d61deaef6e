"""The line that says how to run a stored thread on: a command that works as printed."""

from __future__ import annotations

import shlex

from statebound.flow.live.records import ThreadRecord
from statebound.flow.live.signature import origin

__all__ = ["run_on", "run_on_command"]


def run_on_command(flow: str, where: str, thread: str, *, paused: bool, model: str | None = None) -> str:
    """``statebound run FLOW [-m MODEL] --store WHERE --thread THREAD --resume`` (and ``--input``
    when the thread waits for an answer), quoted for a POSIX shell. ``model``: the one the thread
    last ran with (a resume with another is refused); its options, such as a server's address,
    are not stored and must be given again."""
    command = ["statebound", "run", flow, *(["-m", model] if model else []), "--store", where, "--thread", thread,
               "--resume"]
    if paused:
        command += ["--input", "your answer"]
    return shlex.join(command)


def run_on(record: ThreadRecord, where: str, *, paused: bool, model: str | None = None) -> str:
    """How to go on with ``record``'s thread in the store at ``where``: the ``statebound run``
    command when the flow's file (or bundled name) is known, else the Python call, for the
    program that defines the flow."""
    flow = origin(record.signature)
    if flow is not None:
        return run_on_command(flow, where, record.thread, paused=paused, model=model)
    answer = ", input='your answer'" if paused else ""
    return (f"flow.resume({record.thread!r}, checkpointer=open_checkpointer({where!r}){answer}) in the program "
            f"that defines flow {record.flow!r}")
