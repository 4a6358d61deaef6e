"""Harness throughput against a local OpenAI-compatible fake server that answers after 200 ms.

The server (raw asyncio HTTP/1.1 with keep-alive, in a separate process) answers every
``POST /v1/chat/completions`` with the toy oracle's reply after ``--delay`` seconds. The harness runs
the toy benchmark's ``direct`` agent (one LLM call per episode) through the real OpenAI-compatible
backend (``statebound.llm.openai_compat.OpenAICompatLLM`` via ``open_model("openai:fake", ...)``),
the run store and all, at each concurrency level. CPU time is this process's (the harness, the
OpenAI SDK and httpx; not the server).

Each level is run three ways: ``openai`` (the HTTP backend above), ``function`` (a function LLM
answering with the same oracle after the same ``asyncio.sleep(delay)``, no HTTP) and ``bare`` (the
same function-LLM episodes under a plain semaphore and ``asyncio.gather``: no runner, executor,
limits or store). ``function`` minus ``bare`` is the harness's own CPU time (runner, executor,
limits, metering, the run store); ``openai`` minus ``function`` is what the HTTP client costs.
``raw`` posts one chat request per episode straight with aiohttp (no SDK, no agent, no harness):
the ceiling the fake server and the loopback connection allow on this machine.

    .venv/bin/python benchmarks/harness_throughput.py [--episodes 1000] [--concurrency 1 10 100]
        [--backends openai function bare raw] [--repeat 1]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import socket
import tempfile
import time

from statebound.bench.episode import Episode, run_episode
from statebound.bench.evaluate import Execution, execute_run, prepare_run
from statebound.bench.models import ModelSpec, open_llm
from statebound.benchmarks.toy import oracle
from statebound.contract.benchmark import EpisodeLimits, Task
from statebound.llm.base import Message, Request


def _reply(body: bytes) -> bytes:
    payload = json.loads(body)
    messages = tuple(Message(m["role"], m["content"]) for m in payload["messages"])
    text = oracle(Request(messages=messages, seed=payload.get("seed")))
    return json.dumps({
        "id": "fake", "object": "chat.completion", "created": 0, "model": payload["model"],
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 20, "completion_tokens": 10, "total_tokens": 30},
    }).encode()


async def _handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay: float) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            body = await reader.readexactly(length)
            await asyncio.sleep(delay)
            answer = _reply(body)
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                         + str(len(answer)).encode() + b"\r\n\r\n" + answer)
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionResetError):
        writer.close()


def serve(port: int, delay: float) -> None:
    async def main() -> None:
        server = await asyncio.start_server(lambda r, w: _handle(r, w, delay), "127.0.0.1", port, backlog=1024)
        async with server:
            await server.serve_forever()

    asyncio.run(main())


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_for(port: int) -> None:
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit("the fake server did not start")


DELAY = 0.2  # the function backend's pause; main() sets it from --delay


async def sleeping_oracle(request: Request) -> str:
    """The function backend: the oracle's reply after the same pause as the fake server's."""
    await asyncio.sleep(DELAY)
    return oracle(request)


def backend_spec(backend: str, port: int) -> ModelSpec:
    if backend == "function":
        return ModelSpec("function:__main__:sleeping_oracle")
    return ModelSpec("openai:fake", {"base_url": f"http://127.0.0.1:{port}/v1", "api_key": "unused"})


async def measure_bare(episodes: int, concurrency: int) -> tuple[float, float, int]:
    """The episodes alone: what any harness would have to spend, leaving its own cost out."""
    model = backend_spec("function", 0)
    _, loaded = prepare_run("toy", agents=["direct"], models=[model], benchmark_options={"count": episodes})
    llm, limits, gate = open_llm(model), EpisodeLimits(), asyncio.Semaphore(concurrency)

    async def one(task: Task) -> None:
        async with gate:
            episode = Episode(task=task, agent="direct", model=model.name)
            await run_episode(loaded.benchmark, loaded.agents, episode, llm=llm, limits=limits)

    wall, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(one(task) for task in loaded.benchmark.tasks()))
    return time.perf_counter() - wall, time.process_time() - cpu, 0


async def measure_raw(episodes: int, concurrency: int, port: int) -> tuple[float, float, int]:
    """The server's ceiling: plain aiohttp POSTs of a toy-sized chat request."""
    import aiohttp

    body = {"model": "fake", "messages": [{"role": "user", "content": "Solve task toy-001: 3 + 4"}]}
    gate, failed = asyncio.Semaphore(concurrency), 0
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(f"http://127.0.0.1:{port}", connector=connector) as session:

        async def one() -> None:
            nonlocal failed
            async with gate, session.post("/v1/chat/completions", json=body) as response:
                failed += response.status != 200
                json.loads(await response.read())

        wall, cpu = time.perf_counter(), time.process_time()
        await asyncio.gather(*(one() for _ in range(episodes)))
        return time.perf_counter() - wall, time.process_time() - cpu, failed


async def measure(model: ModelSpec, episodes: int, concurrency: int) -> tuple[float, float, int]:
    config, benchmark = prepare_run("toy", agents=["direct"], models=[model], benchmark_options={"count": episodes})
    with tempfile.TemporaryDirectory() as out:
        wall, cpu = time.perf_counter(), time.process_time()
        outcome = await execute_run(
            config, out_dir=out, benchmark=benchmark,
            execution=Execution(concurrency=concurrency, progress=False),
        )
        return time.perf_counter() - wall, time.process_time() - cpu, outcome.crashed


async def compare(episodes: int, levels: list[int], backends: list[str], port: int, repeat: int) -> None:
    """All levels in one event loop, so the backend's HTTP client is opened once and closed cleanly."""
    async def run(backend: str, count: int, concurrency: int) -> tuple[float, float, int]:
        if backend == "bare":
            return await measure_bare(count, concurrency)
        if backend == "raw":
            return await measure_raw(count, concurrency, port)
        return await measure(backend_spec(backend, port), count, concurrency)

    for backend in backends:
        await run(backend, 20, 10)  # warm-up: imports, first connections
    print(f"{episodes} episodes, server in a separate process; backend openai = OpenAICompatLLM over HTTP, "
          "function = the same replies after asyncio.sleep, no HTTP; bare = function without the harness; "
          "raw = aiohttp POSTs alone (the server's ceiling; 'crashed' counts non-200 replies)")
    print(f"{'concurrency':>11} {'backend':>8} {'wall s':>8} {'episodes/s':>10} {'speed-up':>8} {'ideal':>6} "
          f"{'CPU s':>7} {'CPU % wall':>10} {'CPU ms/ep':>9} {'crashed':>7}")
    base: dict[str, float] = {}
    cpu_ms: dict[tuple[int, str], float] = {}
    walls: dict[tuple[int, str], float] = {}
    for concurrency in levels:
        for backend in backends:
            # the median run by CPU time: a shared machine's other jobs inflate single runs
            runs = sorted([await run(backend, episodes, concurrency) for _ in range(repeat)], key=lambda r: r[1])
            wall, cpu, crashed = runs[len(runs) // 2]
            rate = episodes / wall
            base.setdefault(backend, rate / concurrency)
            cpu_ms[concurrency, backend] = 1000 * cpu / episodes
            walls[concurrency, backend] = wall
            print(f"{concurrency:>11} {backend:>8} {wall:>8.2f} {rate:>10.1f} {rate / base[backend]:>8.1f} "
                  f"{concurrency:>6} {cpu:>7.2f} {100 * cpu / wall:>10.1f} {1000 * cpu / episodes:>9.2f} {crashed:>7}")
    if {"function", "bare"} <= set(backends):
        print("the harness's own CPU = function - bare, per episode and as a share of the function run's wall time")
        for concurrency in levels:
            own = cpu_ms[concurrency, "function"] - cpu_ms[concurrency, "bare"]
            share = 100 * own * episodes / 1000 / walls[concurrency, "function"]
            print(f"{concurrency:>11}: {own:.3f} ms per episode = {share:.1f}% of wall")
    if {"openai", "function"} <= set(backends):
        print("CPU ms per episode with the openai backend = function run (episodes + harness) + HTTP client (the rest)")
        for concurrency in levels:
            total, harness = cpu_ms[concurrency, "openai"], cpu_ms[concurrency, "function"]
            print(f"{concurrency:>11}: {total:.2f} = function run {harness:.2f} ({100 * harness / total:.0f}%)"
                  f" + HTTP client {total - harness:.2f} ({100 * (total - harness) / total:.0f}%)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 10, 100])
    parser.add_argument("--delay", type=float, default=0.2)
    parser.add_argument("--repeat", type=int, default=1, help="runs per level and backend; the median (by CPU) is shown")
    parser.add_argument("--backends", nargs="+", choices=["openai", "function", "bare", "raw"],
                        default=["openai", "function", "bare", "raw"])
    args = parser.parse_args()
    global DELAY
    DELAY = args.delay
    port = _free_port()
    server = multiprocessing.get_context("spawn").Process(target=serve, args=(port, args.delay), daemon=True)
    server.start()
    try:
        _wait_for(port)
        asyncio.run(compare(args.episodes, args.concurrency, args.backends, port, args.repeat))
    finally:
        server.terminate()


if __name__ == "__main__":
    main()
