"""Checkpointed flows: statebound's SQLite checkpointer vs LangGraph's, and kill -9 + resume.

1. The same 100-turn machine as benchmarks/flow_overhead.py (S0 -> S1 -> S2 -> S3 -> S0 ...,
   each state an instruction and an LLM call, the same scripted replies), with a SQLite
   checkpointer on both sides: bytes stored for one run, and time per transition (time in the
   LLM double subtracted) over ``--runs`` runs, each its own thread.
2. statebound's checkpoint cost per transition: the same runs with and without a checkpointer.
3. ``--kills`` runs of a 30-turn flow killed with SIGKILL at a random point and resumed
   (benchmarks/kill_resume.py): replies asked for again, and whether each run ends as an
   uninterrupted one; then as many of a flow whose model calls tools, one of them not repeatable
   (payments ended twice or run again without asking).

    .venv/bin/python benchmarks/live_flows.py [--turns 100] [--runs 20] [--kills 20]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sqlite3
import tempfile
import time
from collections import deque
from pathlib import Path

from flow_overhead import TimedLLM, langgraph_app, replies, statebound_flow
from kill_resume import Harness, ToolHarness

from statebound.flow.live import Durability, SQLiteCheckpointer
from statebound.llm.base import Message, Request
from statebound.llm.testing import ScriptedLLM


def stored_bytes(path: Path) -> int:
    """The database file's size once its write-ahead log is folded in."""
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return sum(p.stat().st_size for p in (path, path.with_name(path.name + "-wal")) if p.exists())


async def statebound_side(turns: int, runs: int, work: Path, *, stored: bool,
                          durability: Durability = "system") -> tuple[float, int]:
    """us per transition (LLM time subtracted) and, when ``stored``, the bytes of one run's store."""
    flow, llm = statebound_flow(turns), TimedLLM(ScriptedLLM())
    store = SQLiteCheckpointer(work / f"statebound-{durability}.db", durability=durability) if stored else None
    transitions, start = 0, time.perf_counter()
    for run in range(runs):
        llm.inner.enqueue(*replies(turns))
        thread = f"t{run}" if stored else None
        result = await flow.run("task", llm=llm, record_events=False, checkpointer=store, thread=thread)
        assert result.exit_state == "End", result.error
        transitions += result.turns
    wall = time.perf_counter() - start
    size = 0
    if store is not None:
        store.close()
        one = SQLiteCheckpointer(work / "one-statebound.db")
        llm.inner.enqueue(*replies(turns))
        await flow.run("task", llm=llm, record_events=False, checkpointer=one, thread="t")
        one.close()
        size = stored_bytes(work / "one-statebound.db")
    return (wall - llm.seconds) / transitions * 1e6, size


def langgraph_side(turns: int, runs: int, work: Path) -> tuple[float, int]:
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph import END

    script: deque[str] = deque()  # the replies; LangGraph's nodes are sync here (SqliteSaver is)
    spent = [0.0]

    def answer(request: Request) -> str:
        return script.popleft()

    def make_node(name: str):
        def node(state: dict) -> dict:
            instruction = ("user", f"Instruction for {name}")
            messages = tuple(Message(role, content) for role, content in [*state["history"], instruction])
            begin = time.perf_counter()
            reply = answer(Request(messages=messages, max_tokens=8))  # the "LLM call"
            spent[0] += time.perf_counter() - begin
            return {"history": [instruction, ("assistant", reply)]}

        return node

    def make_router(following: str):
        def route(state: dict) -> str:
            content = state["history"][-1][1]
            return END if "done" in content else following

        return route

    def run(app, thread: str) -> None:
        script.extend(replies(turns))
        out = app.invoke({"history": [("user", "task")]},
                         config={"recursion_limit": turns + 10, "configurable": {"thread_id": thread}})
        assert out["history"][-1][1] == "done"

    with sqlite3.connect(work / "langgraph.db", check_same_thread=False) as conn:
        app = langgraph_app(make_node, make_router, SqliteSaver(conn))
        start = time.perf_counter()
        for i in range(runs):
            run(app, f"t{i}")
        wall = time.perf_counter() - start
    with sqlite3.connect(work / "one-langgraph.db", check_same_thread=False) as conn:
        run(langgraph_app(make_node, make_router, SqliteSaver(conn)), "t")
    return (wall - spent[0]) / (runs * turns) * 1e6, stored_bytes(work / "one-langgraph.db")


def kill_trials(count: int, work: Path) -> None:
    harness = Harness(work / "kills")
    rng = random.Random(20)
    trials = [harness.trial(rng) for _ in range(count)]
    print(f"kill -9 at a random point, then --resume ({count} runs of a {len(harness.calls('reference'))}-call flow):")
    print(f"  stored replies asked for again:      {sum(t.reasked for t in trials)}")
    print(f"  calls in flight at the kill, re-run: {sum(t.in_flight for t in trials)} "
          f"(killed after {min(t.killed_after for t in trials)}-{max(t.killed_after for t in trials)} calls)")
    print(f"  runs ending as an uninterrupted run: {sum(t.same for t in trials)}/{count}")
    tools = ToolHarness(work / "tool-kills")
    tool_trials = [tools.trial(rng) for _ in range(count)]
    print(f"kill -9 at a random point of a flow whose model calls tools, then --resume ({count} runs; a person "
          "answers repeat or skip about an interrupted payment):")
    print(f"  stored replies asked for again:          {sum(t.reasked for t in tool_trials)}")
    print(f"  payments (not repeatable) ended twice:   {sum(t.paid_twice for t in tool_trials)}")
    print(f"  payments run again without asking:       {sum(t.unasked for t in tool_trials)}")
    print(f"  resumes that asked about a payment:      {sum(t.asked for t in tool_trials)}")
    print(f"  runs ending as an uninterrupted run:     {sum(t.same for t in tool_trials)}/{count}")
    print("  kills that landed in the model's call or between steps / in note / in pay: "
          + " / ".join(str(sum(t.landed == where for t in tool_trials)) for where in ("model", "note", "pay")))


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=100, help="transitions per run")
    parser.add_argument("--runs", type=int, default=20, help="runs (threads) per side")
    parser.add_argument("--kills", type=int, default=20, help="kill -9 + resume runs (0: skip)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="live-flows-") as tmp:
        work = Path(tmp)
        warm = work / "warm"
        warm.mkdir()
        await statebound_side(args.turns, 2, warm, stored=True)
        await asyncio.to_thread(langgraph_side, args.turns, 2, warm)
        plain, _ = await statebound_side(args.turns, args.runs, work, stored=False)
        ours, our_bytes = await statebound_side(args.turns, args.runs, work, stored=True)
        fastest, _ = await statebound_side(args.turns, args.runs, work, stored=True, durability="process")
        theirs, their_bytes = await asyncio.to_thread(langgraph_side, args.turns, args.runs, work)
        print(f"{args.turns}-turn flow, {args.runs} runs per side, SQLite checkpointers:")
        print(f"  statebound, no checkpointer:   {plain:8.1f} us/transition")
        print(f"  statebound + SQLiteCheckpointer: {ours:6.1f} us/transition, {our_bytes:>9,} bytes for one run")
        print(f"  langgraph + SqliteSaver:       {theirs:8.1f} us/transition, {their_bytes:>9,} bytes for one run")
        print(f"  langgraph / statebound:        {theirs / ours:8.1f}x time, {their_bytes / our_bytes:.1f}x bytes")
        print(f"  statebound checkpoint cost:    {ours - plain:8.1f} us/transition (3 checkpoints: 2 output "
              "functions and the transition, committed once, before the next LLM call)")
        print(f"    with durability='process':   {fastest - plain:8.1f} us/transition (no fsync at all)")
        if args.kills:
            kill_trials(args.kills, work)


if __name__ == "__main__":
    asyncio.run(main())
