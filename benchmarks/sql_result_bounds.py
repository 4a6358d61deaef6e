"""Peak memory of the evaluating process for the hostile queries of issue #38, with and without bounds.

    .venv/bin/python benchmarks/sql_result_bounds.py                  # SQLite, bounded (as shipped)
    .venv/bin/python benchmarks/sql_result_bounds.py --unbounded      # SQLite as before the bounds
    .venv/bin/python benchmarks/sql_result_bounds.py --db mysql       # after scripts/mariadb.sh start

Each query runs as the single action of a fresh episode in its own child process; the figure is
that child's peak resident set (``ru_maxrss``) minus its peak just before the action, with the
observation's length and its first words. ``--unbounded`` puts back what the code did before:
every row fetched (no byte or row budget), SQLite values up to 1,000,000 bytes, no observation
cap, no statement memory limit. Use a short ``--timeout`` with it: memory grows until the statement time limit stops it
(issue #38 measured 6.9 GB with the 10 s default).
"""

from __future__ import annotations

import argparse
import multiprocessing
import resource
import sqlite3

from statebound.envs.sql import SqlEnvironment, load_tasks, open_backend, watchdog
from statebound.envs.sql.budget import ResultBudget

TASK = next(t.id for t in load_tasks() if t.db == "network_1")
QUERIES = {
    "sqlite": {
        "recursive CTE of 1 MB values": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) "
                                        "SELECT zeroblob(999999) FROM c",
        "1 MB value per table row": "SELECT zeroblob(999999) FROM highschooler",
        "9-way cartesian join": "SELECT * FROM " + ", ".join(f"highschooler t{i}" for i in range(9)),
        "9-way join ORDER BY random()": "SELECT * FROM " + ", ".join(f"highschooler t{i}" for i in range(9))
                                        + " ORDER BY random()",
    },
    "mysql": {
        "recursive CTE of 1 MB values": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) "
                                        "SELECT REPEAT('x', 999999) FROM c",
        "1 MB value per table row": "SELECT REPEAT('x', 999999) FROM highschooler",
        "9-way cartesian join": "SELECT * FROM " + ", ".join(f"highschooler t{i}" for i in range(9)),
        "9-way join ORDER BY rand()": "SELECT * FROM " + ", ".join(f"highschooler t{i}" for i in range(9))
                                      + " ORDER BY rand()",
        "BENCHMARK() past the time limit": "SELECT BENCHMARK(100000000000, MD5('x'))",
    },
}
UNBOUNDED = ResultBudget(max_rows=10**18, max_bytes=10**18)


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _measure(db: str, sql: str, unbounded: bool, timeout_s: float, out: multiprocessing.Queue) -> None:
    extra = {"result_budget": UNBOUNDED, "max_observation_chars": None} if unbounded else {}
    env = SqlEnvironment(backend=open_backend(db), max_turns=None, timeout_s=timeout_s, **extra)
    env.reset(TASK)
    if unbounded and db == "sqlite":
        env._current().session._conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, 1_000_000)  # type: ignore[attr-defined]
        watchdog.resident_bytes = lambda: None  # the deadline only
    before = _peak_mb()
    step = env.step(f"execute[{sql}]")
    out.put((_peak_mb() - before, len(step.observation), step.observation[:60].replace("\n", " ")))
    env.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", choices=("sqlite", "mysql"), default="sqlite")
    parser.add_argument("--unbounded", action="store_true", help="as before the bounds (see above)")
    parser.add_argument("--timeout", type=float, default=10.0, help="statement time limit, seconds")
    args = parser.parse_args()
    context = multiprocessing.get_context("spawn")
    print(f"{args.db}, {'unbounded' if args.unbounded else 'bounded'}, statement limit {args.timeout} s")
    print(f"{'query':34} {'peak RSS added':>15} {'observation':>12}  starts with")
    for name, sql in QUERIES[args.db].items():
        out: multiprocessing.Queue = context.Queue()
        child = context.Process(target=_measure, args=(args.db, sql, args.unbounded, args.timeout, out))
        child.start()
        added, length, start = out.get()
        child.join()
        print(f"{name:34} {added:12.1f} MB {length:12,}  {start!r}")


if __name__ == "__main__":
    main()
