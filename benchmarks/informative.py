"""Print InterCode success rates apart on the tasks where doing nothing does not already succeed.

    .venv/bin/python benchmarks/informative.py PATH [PATH ...]

Upstream's rewards let doing nothing score 1 on some tasks. SQL: an empty result matches an empty
gold result, a count of 0 a gold 0 (an empty table, a condition no row meets). Bash: a command
that changes no file and prints nothing matches a gold command that changes nothing the snapshot
sees and prints nothing (or a command that finds nothing). Runs stored since 2026-11-25 carry
this in each episode's meta (the report's "SR % (informative)"); for older stores this script
works it out again from each task's gold command on a fresh database or sandbox (the
environment's ``gold_informative`` metric; ``statebound report --informative`` does the same for
its tables). For every agent of every run it prints the successes on all tasks, on the informative
ones and on the others. A PATH is a run directory of ``intercode-sql`` or ``intercode-bash``, or a
folder of them (a record).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from statebound.bench.store import RunStore
from statebound.contract.result import EpisodeResult
from statebound.report.informative import informative_tasks
from statebound.report.status import find_runs


def solved(results: list[EpisodeResult]) -> str:
    return f"{sum(r.success for r in results)}/{len(results)}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="+", type=Path)
    args = parser.parse_args()
    stored: dict[Path, tuple[str, list[EpisodeResult]]] = {}
    for run in find_runs(args.paths):
        with RunStore(run, read_only=True) as store:
            config = store.config()
            stored[run] = (config.benchmark if config else "?", store.results())
    print("run\tagent\tall\tinformative\tothers (doing nothing succeeds)")
    for benchmark in dict.fromkeys(name for name, _ in stored.values()):
        tasks = {r.task for name, results in stored.values() if name == benchmark for r in results}
        informative = informative_tasks(benchmark, tasks)
        print(f"# {benchmark}: {len(informative)} of the {len(tasks)} tasks are informative")
        for run, (name, results) in stored.items():
            if name != benchmark:
                continue
            for agent in dict.fromkeys(r.agent for r in results):
                mine = [r for r in results if r.agent == agent]
                told = [r for r in mine if r.task in informative]
                other = [r for r in mine if r.task not in informative]
                print(f"{run}\t{agent}\t{solved(mine)}\t{solved(told)}\t{solved(other)}")


if __name__ == "__main__":
    main()
