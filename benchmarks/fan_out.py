"""Wall time of a fan-out: the bundled research flow (statebound.examples.fan_out) over 8 questions,
each branch waiting 200 ms on a scripted model, run with every branch at once, one at a time
(limit=1, the sequential version), and over 1 question (one branch's time); medians of --runs.

    PYTHONPATH=src .venv/bin/python benchmarks/fan_out.py [--runs 5] [--branches 8] [--delay 0.2] [--store]

``--store`` runs each with a SQLite checkpointer (every branch a stored thread).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from statebound.examples.fan_out import build_flow, delayed_model
from statebound.flow import ExitReason, Flow
from statebound.flow.live import SQLiteCheckpointer


def timed(flow: Flow, questions: list[str], delay: float, store: Path | None) -> float:
    started = time.perf_counter()
    if store is None:
        result = flow.run_sync("research", llm=delayed_model(delay), vars={"questions": questions})
    else:
        with SQLiteCheckpointer(store) as checkpointer:
            result = flow.run_sync("research", llm=delayed_model(delay), vars={"questions": questions},
                                   checkpointer=checkpointer, thread=f"t{time.perf_counter_ns()}")
    seconds = time.perf_counter() - started
    assert result.exit_reason is ExitReason.FINAL and len(result.vars.notes) == len(questions), result.error
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--branches", type=int, default=8)
    parser.add_argument("--delay", type=float, default=0.2, help="seconds each branch waits on the model")
    parser.add_argument("--store", action="store_true", help="checkpoint every run in a SQLite file")
    args = parser.parse_args()
    questions = [f"aspect {n}" for n in range(1, args.branches + 1)]
    with tempfile.TemporaryDirectory(prefix="fan-out-") as tmp:
        store = Path(tmp) / "runs.db" if args.store else None
        cases = {"one branch": (build_flow(), questions[:1]), f"{args.branches} branches at once": (build_flow(), questions),
                 f"{args.branches} branches one at a time": (build_flow(limit=1), questions)}
        medians = {name: statistics.median(timed(flow, items, args.delay, store) for _ in range(args.runs))
                   for name, (flow, items) in cases.items()}
    one = medians["one branch"]
    for name, seconds in medians.items():
        print(f"{name:<28} {seconds * 1000:8.1f} ms  ({seconds / one:.2f}x one branch)")
    parallel, sequential = list(medians.values())[1:]
    print(f"gain over the sequential version: {sequential / parallel:.2f}x ({'with' if args.store else 'without'} "
          f"a checkpointer, {args.runs} runs, median)")


if __name__ == "__main__":
    main()
