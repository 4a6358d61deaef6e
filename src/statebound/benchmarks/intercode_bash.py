"""``intercode-bash``: 200 NL2Bash tasks over four file systems, each episode in a bubblewrap sandbox.

Options (``-O key=value``): ``replay`` (a JSONL file of recorded actions for the ``replay``
oracle: ``{"task": ID, "actions": [...]}``), ``observation_chars`` (350: what the model sees of one
output), ``format`` (``free``, or ``grammar``: every reply held to the agent's shape, llama.cpp
models) and ``reply_tokens`` (256: each model call's ``max_tokens``). A turn is one action the
agent sends (its ``submit`` included); at ``max_turns`` (10) the episode is submitted as it stands.
``turns`` and ``error_rate`` are counted as StateFlow's Table 1 counts them
(:mod:`statebound.envs.intercode_tally`); ``meta`` has ``fs``, the reward parts ``p1``, ``p2``,
``p3`` with the counts of missing and extra changes, and ``invalid_actions`` (actions that were no
command: the report's Invalid/ep). The agents are in :mod:`statebound.agents.bash`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from statebound.agents.bash.options import BashOptions
from statebound.contract.benchmark import Benchmark, Grade, Reference, Task
from statebound.contract.columns import INFORMATIVE_SUCCESS, INVALID_ACTIONS
from statebound.contract.trace import Trace
from statebound.envs.bash import BashEnv, load_tasks

__all__ = ["BashOptions", "InterCodeBash"]


class InterCodeBash(Benchmark[BashOptions, BashEnv]):
    name = "intercode-bash"
    summary = "200 NL2Bash tasks in a bubblewrap sandbox (InterCode-Bash)"
    Options = BashOptions
    report_columns = (INVALID_ACTIONS, INFORMATIVE_SUCCESS)

    def tasks(self) -> Sequence[Task]:
        return [Task(id=t.id, question=t.query, meta={"fs": t.fs}) for t in load_tasks()]

    def make_env(self, *, max_turns: int | None, **settings: Any) -> BashEnv:
        return BashEnv(observation_chars=self.options.observation_chars, **settings)

    def reference(self, task_id: str) -> Reference | None:
        """The gold command (its output is not made again here: that needs a sandbox; the grade's
        parts p1, p2, p3 say how the episode's file system and output compared)."""
        return next((Reference(gold=task.gold) for task in load_tasks() if task.id == task_id), None)

    def grade(self, env: BashEnv, task: Task, trace: Trace) -> Grade:
        if not env.submitted:  # the turn limit was reached: submit the episode as it stands
            env.submit_at_limit()
        score, parts = env.grade()
        meta: dict[str, Any] = {"p1": parts.p1, "p2": parts.p2, "p3": parts.p3, "missing": len(parts.missing),
                                "extra": len(parts.extra), "invalid_actions": env.tally.invalid}
        if score.metrics["gold_informative"]:
            meta[INFORMATIVE_SUCCESS.key] = score.success
        return Grade(reward=score.reward, success=score.success, turns=env.turns, error_rate=env.error_rate,
                     meta=meta)
