"""Print InterCode-SQL success rates apart on tasks whose gold result tells queries apart.

    .venv/bin/python benchmarks/sql_informative.py PATH [PATH ...]

Upstream's reward scores an empty result against an empty gold result as a success, and a count
of 0 against a gold 0. On tasks whose gold result holds nothing but 0, NULL or empty text (an
empty table, a condition no row meets), any query that finds nothing succeeds. Runs stored since
2026-11-25 carry this in each episode's meta (the report's "SR % (gold has values)"); for older
stores this script works it out again: each task's gold query on a fresh SQLite copy of its
database (``envs.sql.reward.informative``). For every agent of every run it prints the successes
on all tasks, on the informative ones and on the others. A PATH is a run directory or a folder of them
(a record).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from statebound.bench.result import EpisodeResult
from statebound.bench.store import RunStore
from statebound.envs.sql import SqlEnvironment
from statebound.report.status import find_runs


def informative_tasks(task_ids: set[str]) -> set[str]:
    """The tasks among ``task_ids`` whose gold result, on a fresh database, is informative."""
    env = SqlEnvironment(backend="sqlite")
    try:
        found = set()
        for task_id in sorted(task_ids, key=int):
            env.reset(task_id)
            if env.score().metrics["gold_informative"]:
                found.add(task_id)
        return found
    finally:
        env.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="+", type=Path)
    args = parser.parse_args()
    stored = {}
    for run in find_runs(args.paths):
        with RunStore(run, read_only=True) as store:
            stored[run] = store.results()
    tasks = {r.task for results in stored.values() for r in results}
    informative = informative_tasks(tasks)
    print(f"{len(informative)} of the {len(tasks)} tasks have an informative gold result")
    print("run\tagent\tall\tinformative gold\tgold of nothing")
    for run, results in stored.items():
        for agent in dict.fromkeys(r.agent for r in results):
            mine = [r for r in results if r.agent == agent]
            told = [r for r in mine if r.task in informative]
            other = [r for r in mine if r.task not in informative]

            def solved(group: list[EpisodeResult]) -> str:
                return f"{sum(r.success for r in group)}/{len(group)}"

            print(f"{run}\t{agent}\t{solved(mine)}\t{solved(told)}\t{solved(other)}")


if __name__ == "__main__":
    main()
