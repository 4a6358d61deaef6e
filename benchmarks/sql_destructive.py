"""How much upstream's SQL reward gives an episode that destroys its database (issue #51).

    .venv/bin/python benchmarks/sql_destructive.py                 # SQLite, the 1034 tasks
    .venv/bin/python benchmarks/sql_destructive.py --db mysql      # after scripts/mariadb.sh start

On every task the same episode runs twice: ``DELETE`` every row of every table of the task's
database, then a query that finds nothing (``SELECT 1 FROM <a table> WHERE 1 = 0``), then
``submit``. With upstream's reward (``gold_on=episode``) the gold query then runs in the emptied
database; with ``gold_on=pristine`` on an untouched copy. The figures are the tasks each scores
1.0 on, and, for comparison, those a query finding nothing solves without deleting anything (the
tasks that are not informative).
"""

from __future__ import annotations

import argparse
import ast
import time

from statebound.envs.sql import SqlEnvironment, load_tasks, open_backend


def _tables(env: SqlEnvironment) -> list[str]:
    shown = env.step("execute[SHOW TABLES]").observation
    return [name for (name,) in ast.literal_eval(shown)]


def _episode(env: SqlEnvironment, task_id: str, *, destroy: bool) -> float:
    env.reset(task_id)
    tables = _tables(env)
    if destroy:
        for _ in range(3):  # foreign keys on MariaDB: children first, whatever the order
            for table in tables:
                env.step(f"execute[DELETE FROM {table}]")
    env.step(f"execute[SELECT 1 FROM {tables[0]} WHERE 1 = 0]")
    env.step("submit")
    return env.score().reward


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", choices=("sqlite", "mysql"), default="sqlite")
    parser.add_argument("--limit", type=int, default=None, help="only the first N tasks")
    args = parser.parse_args()
    backend = open_backend(args.db)
    tasks = load_tasks()[: args.limit]
    started = time.perf_counter()
    solved = {"nothing (no change)": 0, "destroyed, gold_on=episode": 0, "destroyed, gold_on=pristine": 0}
    for task in tasks:
        upstream = SqlEnvironment(backend=backend, max_turns=None)
        pristine = SqlEnvironment(backend=backend, max_turns=None, gold_on="pristine")
        solved["nothing (no change)"] += _episode(upstream, task.id, destroy=False) == 1.0
        solved["destroyed, gold_on=episode"] += _episode(upstream, task.id, destroy=True) == 1.0
        solved["destroyed, gold_on=pristine"] += _episode(pristine, task.id, destroy=True) == 1.0
        upstream.close()
        pristine.close()
    print(f"{len(tasks)} InterCode-SQL tasks on {args.db} ({time.perf_counter() - started:.0f} s):")
    for what, count in solved.items():
        print(f"  {what:30s} {count:5d} solved ({100 * count / len(tasks):.1f} %)")


if __name__ == "__main__":
    main()
