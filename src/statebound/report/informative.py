"""Which tasks doing nothing already solves, worked out again for runs stored before their
benchmark recorded it.

Upstream's InterCode rewards give 1 to doing nothing on some tasks (SQL: a gold result of no
rows, or a count of 0; Bash: a gold command that changes nothing and prints nothing). Benchmarks
that declare :data:`~statebound.contract.columns.INFORMATIVE_SUCCESS` mark the other tasks in each
episode's meta when grading; older stores lack the mark. :func:`fill_informative` adds it to
loaded runs (never to the stores) by running each task's gold on a fresh environment, whose score
says ``gold_informative``: about 35 s for Bash's 200 tasks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import TYPE_CHECKING

from statebound.bench.declared_columns import report_columns
from statebound.bench.registry import benchmark_class
from statebound.contract.columns import INFORMATIVE_SUCCESS

if TYPE_CHECKING:
    from statebound.report.tables import LoadedRun

__all__ = ["fill_informative", "informative_tasks", "unmarked_runs"]


def informative_tasks(benchmark: str, task_ids: Iterable[str],
                      progress: Callable[[int, int], None] | None = None) -> frozenset[str]:
    """The tasks among ``task_ids`` on which doing nothing does not score 1, from the gold run on
    ``benchmark``'s environment with its default options (SQLite for SQL); ``progress(done,
    total)`` follows the tasks."""
    kind = benchmark_class(benchmark)
    env = kind(kind.Options()).make_env(max_turns=None)
    tasks = sorted(set(task_ids))
    found = set()
    try:
        for done, task_id in enumerate(tasks, start=1):
            env.reset(task_id)
            if env.score().metrics["gold_informative"]:
                found.add(task_id)
            if progress:
                progress(done, len(tasks))
    finally:
        env.close()
    return frozenset(found)


def _benchmark(run: LoadedRun) -> str:
    return run.config.benchmark if run.config is not None else ""


def unmarked_runs(runs: Sequence[LoadedRun]) -> list[LoadedRun]:
    """The runs whose benchmark marks informative tasks but whose episodes carry no mark: stored
    before the benchmark did (a run where every task is one doing nothing solves looks the same,
    and working it out again changes nothing there)."""
    def marks(run: LoadedRun) -> bool:
        return run.config is not None and INFORMATIVE_SUCCESS in report_columns([_benchmark(run)])

    return [run for run in runs if marks(run) and run.results
            and not any(INFORMATIVE_SUCCESS.key in r.meta for r in run.results)]


def fill_informative(runs: Sequence[LoadedRun],
                     progress: Callable[[str, int, int], None] | None = None) -> list[LoadedRun]:
    """Mark, in memory, the episodes of :func:`unmarked_runs` on informative tasks as the benchmark's
    grade would have (crashed episodes stay unmarked, as graded runs leave them); return those runs.
    ``progress(benchmark, done, total)`` follows the gold runs."""
    unmarked = unmarked_runs(runs)
    tasks: dict[str, set[str]] = {}
    for run in unmarked:
        tasks.setdefault(_benchmark(run), set()).update(r.task for r in run.results)
    informative = {name: informative_tasks(name, ids, partial(progress, name) if progress else None)
                   for name, ids in tasks.items()}
    for run in unmarked:
        found = informative[_benchmark(run)]
        for result in run.results:
            if result.error is None and result.task in found:
                result.meta[INFORMATIVE_SUCCESS.key] = result.success
    return unmarked
