"""``alfworld``: the 134 games of ALFWorld's unseen validation split on the real TextWorld engine.

A turn is one reply of the agent (an action sent to the game, or a ReAct ``think:`` line, as in
ReAct's runs); the game ends at ``max_turns`` actions (50, as in ReAct and StateAct). Options
(``-O key=value``): ``correct_put`` (StateAct's put correction, off), ``legacy_put`` (on: accept
and speak the prompts' ``put X in/on Y``), ``format`` (``free``, or ``grammar``: every reply held
to its agent's shape, llama.cpp models). Each result has ``turns`` = game steps, ``meta.task_type``,
``meta.steps`` and the counts ``put_corrections``, ``legacy_puts``, ``failed_actions``; StateAct
variants that track state add ``state_accuracy``, ``state_location_accuracy``,
``state_inventory_accuracy`` and ``state_steps``. Every episode's environment lists its admissible
commands, so its stored steps keep what was offered beside each action. The agents are in :mod:`statebound.agents.alfworld`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from statebound.agents.alfworld.options import AlfworldOptions
from statebound.contract.benchmark import Benchmark, Grade, Task
from statebound.contract.columns import MetaColumn
from statebound.contract.trace import Trace
from statebound.envs.alfworld import TASK_TYPES, AlfworldEnv, list_games

__all__ = ["Alfworld", "AlfworldOptions"]


class Alfworld(Benchmark[AlfworldOptions, AlfworldEnv]):
    name = "alfworld"
    summary = "134 household games on the real ALFWorld/TextWorld engine"
    Options = AlfworldOptions
    default_max_turns = 50
    renamed_options: ClassVar[Mapping[str, str]] = {"max_steps": "--max-turns"}
    breakdown_order: ClassVar[Mapping[str, tuple[str, ...]]] = {"task_type": TASK_TYPES}
    # accuracies are per episode; weighting by tracked steps gives the share of all steps
    report_columns = (
        MetaColumn("state_accuracy", "State acc %", scale=100, weight="state_steps"),
        MetaColumn("state_location_accuracy", "Location acc %", scale=100, weight="state_steps"),
        MetaColumn("state_inventory_accuracy", "Inventory acc %", scale=100, weight="state_steps"),
        MetaColumn("put_corrections", "Put corrections/game"),
        MetaColumn("turns_dropped", "Turns cut to fit/game", missing=0.0),
    )

    def tasks(self) -> Sequence[Task]:
        return [Task(id=g.id, question=g.name, meta={"task_type": g.task_type}) for g in list_games()]

    def make_env(self, *, max_turns: int | None, admissible: bool = True, **settings: Any) -> AlfworldEnv:
        """The game's environment; it lists its admissible commands whatever the agent, so the
        harness stores what was offered beside each action (any run can then teach a machine)."""
        return AlfworldEnv(max_steps=max_turns or self.default_max_turns or 50, correct_put=self.options.correct_put,
                           legacy_put=self.options.legacy_put, admissible=admissible, **settings)

    def grade(self, env: AlfworldEnv, task: Task, trace: Trace) -> Grade:
        score = env.score()
        return Grade(reward=score.reward, success=score.success, turns=env.steps,
                     error_rate=env.failed_actions / env.steps if env.steps else 0.0,
                     meta={key: int(value) for key, value in score.metrics.items()})
