"""statebound serve beside LangGraph's own server (``langgraph dev``, in memory), driven by the same
``langgraph-sdk`` client: runs completed per second and the latency of ``runs.wait`` at concurrency
1, 10 and 50, ``runs.stream`` to its last event, an interrupt answered with ``Command(resume=...)``,
and the memory a finished thread costs the server.

Both serve the same two graphs with no model: ``steps`` (three states, each writing a field) and
``ask`` (a state that pauses for a person, then an end). statebound stores every run durably
(SQLite, or PostgreSQL with ``--postgres URL``); ``langgraph dev`` keeps everything in memory.

    .venv/bin/python benchmarks/serve_throughput.py [--runs 200] [--postgres URL]
        [--langgraph ~/.cache/statebound/langgraph-dev/bin/langgraph]

``langgraph dev`` lives in its own virtual environment (``python3 -m venv DIR && DIR/bin/pip install
'langgraph-cli[inmem]'``); without it only statebound's figures are printed, said so.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx

STATEBOUND_FLOWS = textwrap.dedent('''
    from dataclasses import dataclass

    from statebound.flow import AskHuman, Flow, State, Update, always


    @dataclass(frozen=True)
    class Counts:
        a: int = 0
        b: int = 0
        c: int = 0


    steps = Flow(name="steps", initial="A", vars=Counts, states=[
        State("A", outputs=[Update(lambda ctx: {"a": 1}, writes=["a"])], transitions=[(always(), "B")]),
        State("B", outputs=[Update(lambda ctx: {"b": 2}, writes=["b"])], transitions=[(always(), "C")]),
        State("C", outputs=[Update(lambda ctx: {"c": 3}, writes=["c"])], transitions=[(always(), "End")]),
        State("End", final=True),
    ])
    ask = Flow(name="ask", initial="Ask", states=[
        State("Ask", outputs=[AskHuman("Go on?")], transitions=[(always(), "End")]),
        State("End", final=True),
    ])
''')
LANGGRAPH_GRAPHS = textwrap.dedent('''
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph
    from langgraph.types import interrupt


    class Counts(TypedDict, total=False):
        task: str
        a: int
        b: int
        c: int
        answer: str


    def a(state): return {"a": 1}
    def b(state): return {"b": 2}
    def c(state): return {"c": 3}


    builder = StateGraph(Counts)
    builder.add_node("a", a)
    builder.add_node("b", b)
    builder.add_node("c", c)
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("b", "c")
    builder.add_edge("c", END)
    steps = builder.compile()


    def ask_node(state): return {"answer": interrupt("Go on?")}


    asking = StateGraph(Counts)
    asking.add_node("ask", ask_node)
    asking.add_edge(START, "ask")
    asking.add_edge("ask", END)
    ask = asking.compile()
''')


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_up(url: str, process: subprocess.Popen[bytes], seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server at {url} stopped")
        try:
            if httpx.get(f"{url}/ok", timeout=2).status_code < 500:
                return
        except httpx.HTTPError:
            time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer within {seconds:.0f} s")


def rss_kib(pid: int) -> int:
    """Resident memory of ``pid`` and its children (a server's workers), in KiB."""
    import psutil

    process = psutil.Process(pid)
    return sum(p.memory_info().rss for p in (process, *process.children(recursive=True))) // 1024


class Side:
    """One server: its URL, the input each graph takes, and how to answer its interrupt."""

    def __init__(self, name: str, url: str, process: subprocess.Popen[bytes], *, task_input: Callable[[int], dict]):
        self.name, self.url, self.process, self.task_input = name, url, process, task_input

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()


def start_statebound(work: Path, store: str) -> Side:
    (work / "bench_flows.py").write_text(STATEBOUND_FLOWS)
    port = _free_port()
    statebound = Path(sys.executable).with_name("statebound")
    command = [str(statebound), "serve", f"{work / 'bench_flows.py'}:steps", f"{work / 'bench_flows.py'}:ask",
               "-m", "scripted", "--store", store, "--port", str(port)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=open(work / "statebound.log", "wb"))
    url = f"http://127.0.0.1:{port}"
    _wait_up(url, process)
    return Side("statebound serve", url, process, task_input=lambda n: {"task": f"task {n}"})


def start_langgraph(work: Path, cli: Path) -> Side:
    graphs = work / "lg"
    graphs.mkdir()
    (graphs / "graphs.py").write_text(LANGGRAPH_GRAPHS)
    (graphs / "langgraph.json").write_text('{"dependencies": ["."], "graphs": {"steps": "./graphs.py:steps", '
                                           '"ask": "./graphs.py:ask"}}')
    port = _free_port()
    env = {**os.environ, "LANGGRAPH_NO_BROWSER": "1", "LANGSMITH_TRACING": "false"}
    command = [str(cli), "dev", "--port", str(port), "--no-browser", "--no-reload"]
    process = subprocess.Popen(command, cwd=graphs, env=env, stdout=subprocess.DEVNULL,
                               stderr=open(work / "langgraph.log", "wb"))
    url = f"http://127.0.0.1:{port}"
    _wait_up(url, process)
    return Side("langgraph dev (in memory)", url, process, task_input=lambda n: {"task": f"task {n}"})


async def timed(calls: list[Callable[[], Awaitable[object]]], concurrency: int) -> tuple[float, list[float]]:
    """Runs ``calls`` ``concurrency`` at a time: wall seconds and each call's seconds."""
    gate = asyncio.Semaphore(concurrency)
    latencies: list[float] = []

    async def one(call: Callable[[], Awaitable[object]]) -> None:
        async with gate:
            start = time.perf_counter()
            await call()
            latencies.append(time.perf_counter() - start)

    start = time.perf_counter()
    await asyncio.gather(*(one(call) for call in calls))
    return time.perf_counter() - start, latencies


def _p(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q) - 1] * 1000 if len(values) > 1 else values[0] * 1000


async def measure(side: Side, runs: int) -> dict[str, str]:
    from langgraph_sdk import get_client

    sdk = get_client(url=side.url, timeout=300)
    figures: dict[str, str] = {}
    for concurrency in (1, 10, 50):
        count = runs if concurrency > 1 else max(20, runs // 4)
        threads = [(await sdk.threads.create())["thread_id"] for _ in range(count)]
        calls = [lambda t=t, n=n: sdk.runs.wait(t, "steps", input=side.task_input(n)) for n, t in enumerate(threads)]
        wall, latencies = await timed(calls, concurrency)
        figures[f"runs.wait, concurrency {concurrency}"] = (f"{count / wall:6.1f} runs/s, p50 {_p(latencies, 50):6.1f} ms, "
                                                             f"p99 {_p(latencies, 99):7.1f} ms")
    threads = [(await sdk.threads.create())["thread_id"] for _ in range(max(20, runs // 4))]

    async def streamed(thread: str, n: int) -> None:
        async for _ in sdk.runs.stream(thread, "steps", input=side.task_input(n), stream_mode="values"):
            pass

    _, latencies = await timed([lambda t=t, n=n: streamed(t, n) for n, t in enumerate(threads)], 1)
    figures["runs.stream to its last event, concurrency 1"] = f"p50 {_p(latencies, 50):6.1f} ms, p99 {_p(latencies, 99):7.1f} ms"
    paused = []
    for n in range(max(20, runs // 4)):
        thread = (await sdk.threads.create())["thread_id"]
        await sdk.runs.wait(thread, "ask", input=side.task_input(n))
        paused.append(thread)
    _, latencies = await timed([lambda t=t: sdk.runs.wait(t, "ask", command={"resume": "yes"}) for t in paused], 1)
    figures["interrupt answered (Command(resume=...)), runs.wait"] = f"p50 {_p(latencies, 50):6.1f} ms"
    before = rss_kib(side.process.pid)
    extra = 500
    for n in range(extra):
        thread = (await sdk.threads.create())["thread_id"]
        await sdk.runs.wait(thread, "steps", input=side.task_input(n))
    grown = rss_kib(side.process.pid) - before
    figures[f"server memory per finished thread ({extra} more)"] = f"{grown / extra:6.2f} KiB"
    return figures


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200, help="runs at concurrency 10 and 50 (a quarter at 1)")
    parser.add_argument("--postgres", help="a postgresql:// URL: statebound's store there instead of SQLite")
    parser.add_argument("--langgraph", type=Path, default=Path.home() / ".cache/statebound/langgraph-dev/bin/langgraph",
                        help="the langgraph CLI of an environment with langgraph-cli[inmem]")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="serve-throughput-") as tmp:
        work = Path(tmp)
        sides = [start_statebound(work, args.postgres or str(work / "serve.db"))]
        if args.langgraph.exists():
            sides.append(start_langgraph(work, args.langgraph))
        else:
            print(f"(no langgraph dev at {args.langgraph}: LangGraph's figures are left out)")
        try:
            results = {side.name: await measure(side, args.runs) for side in sides}
        finally:
            for side in sides:
                side.stop()
    store = "PostgreSQL" if args.postgres else "SQLite"
    print(f"no model, one client process (langgraph-sdk), statebound durable on {store}:")
    for metric in next(iter(results.values())):
        print(f"  {metric}")
        for name, figures in results.items():
            print(f"    {name:28} {figures[metric]}")


if __name__ == "__main__":
    asyncio.run(main())
