"""``intercode-sql``: 1034 Spider tasks on SQLite (embedded) or MariaDB, graded as upstream InterCode.

Options (``-O key=value``): ``db`` (``sqlite`` or ``mysql``, a server from ``scripts/mariadb.sh``),
``replay`` (a JSONL file of recorded actions, for the ``replay`` oracle), ``cache_dir`` (where the
SQLite copies of the databases are kept), ``format`` (``free``, or ``grammar``: every model reply
held to the agent's shape by a GBNF grammar, llama.cpp models) and ``reply_tokens`` (each model
call's ``max_tokens``). A turn is one action the agent sends (its ``submit`` included); at
``max_turns`` (10) the episode is submitted as it stands. ``gold_on`` (``episode``, upstream's, or
``pristine``) says where the gold query runs at grading; ``Changed %`` counts the episodes that
changed their database. ``turns`` and ``error_rate`` are counted
as StateFlow's Table 1 counts them (:mod:`statebound.envs.intercode_tally`). The agents are in :mod:`statebound.agents.sql`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from statebound.agents.sql.options import SqlOptions
from statebound.contract.benchmark import Benchmark, Grade, Reference, Task
from statebound.contract.columns import INFORMATIVE_SUCCESS, INVALID_ACTIONS, MetaColumn
from statebound.contract.trace import Trace
from statebound.envs.sql import Backend, SqlEnvironment, load_tasks, open_backend

__all__ = ["CHANGED_DATA", "InterCodeSql", "SqlOptions"]

CHANGED_DATA = MetaColumn(
    "changed_data", "Changed %", scale=100,
    note="episodes whose statements changed their database (rows, or tables on SQLite), %: upstream's reward runs "
         "the gold query in that changed database (an emptied table makes an empty gold result, which a query "
         "finding nothing matches); -O gold_on=pristine runs it on an untouched copy")


class InterCodeSql(Benchmark[SqlOptions, SqlEnvironment]):
    name = "intercode-sql"
    summary = "1034 Spider text-to-SQL tasks on SQLite or MariaDB (InterCode-SQL)"
    Options = SqlOptions
    report_columns = (INVALID_ACTIONS, INFORMATIVE_SUCCESS, CHANGED_DATA)  # from the grade's meta (the environment's counts)
    breakdown_order: ClassVar[Mapping[str, tuple[str, ...]]] = {"hardness": ("easy", "medium", "hard", "extra")}

    def __init__(self, options: SqlOptions) -> None:
        super().__init__(options)
        self._backend: Backend = open_backend(options.db, cache_dir=options.cache_dir)

    def tasks(self) -> Sequence[Task]:
        return [Task(t.id, t.query, meta={"hardness": t.hardness, "db": t.db}) for t in load_tasks()]

    def make_env(self, *, max_turns: int | None, **settings: Any) -> SqlEnvironment:
        return SqlEnvironment(backend=self._backend, max_turns=max_turns, gold_on=self.options.gold_on, **settings)

    def reference(self, task_id: str) -> Reference | None:
        """The gold query and its result on a fresh copy of the task's database, as an
        observation shows it (rows not cut to what the agents see)."""
        gold = next((task.gold for task in load_tasks() if task.id == task_id), None)
        if gold is None:
            return None
        env = self.make_env(max_turns=None, max_obs_chars=None, max_obs_rows=None)
        try:
            env.reset(task_id)
            return Reference(gold=gold, expected=env.step(f"execute[{gold}]").observation)
        finally:
            env.close()

    def grade(self, env: SqlEnvironment, task: Task, trace: Trace) -> Grade:
        score = env.score()
        metrics: dict[str, Any] = dict(score.metrics)
        if metrics.pop("gold_informative"):
            metrics[INFORMATIVE_SUCCESS.key] = score.success
        return Grade(reward=score.reward, success=score.success, turns=int(metrics.pop("turns")),
                     error_rate=metrics.pop("error_rate"), meta=metrics)
