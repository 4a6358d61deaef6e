"""Checkpoint bytes per transition of a flow with variables: constant, since only changes are stored.

A loop of 400 transitions over a flow whose variables hold ten fields (one a list that grows); each
visit writes one counter. Prints the mean checkpoint body size of the first and last 50
transitions, with the variables and without them (the same loop with the counter in a tool's
output), and the time to resume the thread (the deltas folded back into a value).

    .venv/bin/python benchmarks/vars_checkpoint_bytes.py
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from statebound.flow import CallTool, Flow, SQLiteCheckpointer, State, ToolResult, Update, always

TURNS = 400


@dataclass(frozen=True)
class Counters:
    count: int = 0
    a: str = "x" * 40
    b: str = "y" * 40
    c: str = "z" * 40
    d: int = 1
    e: int = 2
    f: float = 3.0
    g: bool = True
    h: str | None = None
    seen: tuple[str, ...] = ("start",)


def looping(with_vars: bool) -> Flow:
    step = (Update(lambda ctx: {"count": ctx.vars.count + 1}, writes=["count"]) if with_vars
            else CallTool(lambda ctx: ToolResult(str(ctx.turn)), name="count", blocking=False))
    return Flow(name="loop", initial="Step", max_turns=TURNS, vars=Counters if with_vars else None, states=[
        State("Step", outputs=[step, CallTool(lambda ctx: "ok", name="work", blocking=False)],
              transitions=[(lambda ctx: ctx.turn >= TURNS - 1, "End"), (always(), "Step")]),
        State("End", final=True)])


def measure(with_vars: bool, directory: Path) -> None:
    flow = looping(with_vars)
    with SQLiteCheckpointer(directory / f"{with_vars}.db") as store:
        flow.run_sync("count", checkpointer=store, thread="t")
        sizes = [len(c.body) for c in store.own_checkpoints("t")]
        started = time.perf_counter()
        result = flow.resume_sync("t", checkpointer=store)
        resumed = time.perf_counter() - started
    per_turn = len(sizes) / TURNS
    head, tail = sizes[: int(50 * per_turn)], sizes[-int(50 * per_turn):]
    print(f"| {'yes' if with_vars else 'no'} | {len(sizes)} | {sum(head) / len(head):.1f} | {sum(tail) / len(tail):.1f} "
          f"| {resumed * 1000:.1f} | {result.vars.count if with_vars else '-'} |")


if __name__ == "__main__":
    print("| variables | checkpoints | mean body bytes, first 50 transitions | last 50 | resume ms | count |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as directory:
        for with_vars in (True, False):
            measure(with_vars, Path(directory))
