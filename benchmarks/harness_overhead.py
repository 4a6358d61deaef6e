"""Harness overhead per episode with an instant function LLM (the toy oracle).

"bare" calls the episode runner (``run_episode``: environment, agent, grading) in a plain loop;
"harness" runs the same episodes through
``execute_run`` (planning, limits and metering, the SQLite run store with one transaction per
episode, result bookkeeping), then ``finish_run`` separately (results.jsonl, trajectories, report;
no plots). The difference per episode is the harness's cost.

    .venv/bin/python benchmarks/harness_overhead.py [--episodes 2000] [--concurrency 1 50]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time

from statebound.bench.episode import Episode, run_episode
from statebound.bench.evaluate import Execution, execute_run, prepare_run
from statebound.bench.models import ModelSpec, open_llm
from statebound.contract.benchmark import EpisodeLimits
from statebound.report.finish import finish_run

ORACLE = ModelSpec("function:statebound.benchmarks.toy:oracle")


async def bare(episodes: int) -> float:
    _, loaded = prepare_run("toy", agents=["direct"], models=[ORACLE], benchmark_options={"count": episodes})
    llm, limits = open_llm(ORACLE), EpisodeLimits()
    started = time.perf_counter()
    for task in loaded.benchmark.tasks():
        episode = Episode(task=task, agent="direct", model=ORACLE.name)
        await run_episode(loaded.benchmark, loaded.agents, episode, llm=llm, limits=limits)
    return time.perf_counter() - started


async def harness(episodes: int, concurrency: int) -> tuple[float, float]:
    config, benchmark = prepare_run("toy", agents=["direct"], models=[ORACLE], benchmark_options={"count": episodes})
    with tempfile.TemporaryDirectory() as out:
        started = time.perf_counter()
        await execute_run(config, out_dir=out, benchmark=benchmark,
                          execution=Execution(concurrency=concurrency, progress=False))
        run = time.perf_counter() - started
        started = time.perf_counter()
        finish_run([out], out_dir=out, plots=False)
        return run, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 50])
    args = parser.parse_args()
    n = args.episodes
    asyncio.run(harness(50, 4))  # warm-up (imports)
    base = asyncio.run(bare(n))
    print(f"{n} toy episodes, one instant LLM call each")
    print(f"{'mode':<22} {'total s':>8} {'us/episode':>11} {'overhead us/ep':>15}")
    print(f"{'bare episode loop':<22} {base:>8.3f} {1e6 * base / n:>11.0f} {'-':>15}")
    for concurrency in args.concurrency:
        run, finish = asyncio.run(harness(n, concurrency))
        print(f"{f'harness, -j {concurrency}':<22} {run:>8.3f} {1e6 * run / n:>11.0f} {1e6 * (run - base) / n:>15.0f}")
        print(f"{'  + export and report':<22} {finish:>8.3f} {1e6 * finish / n:>11.0f} {1e6 * finish / n:>15.0f}")


if __name__ == "__main__":
    main()
