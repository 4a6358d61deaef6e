"""InterCode-SQL agents: StateFlow and SF_Agent (with ablations), the benchmark's baselines, our
scoped machine (``stateflow-scoped``, with its random control ``stateflow-scoped-random``), and two
oracles that check the environment. Every agent is a :class:`~statebound.flow.Flow` whose tools act
on the environment passed as ``deps`` (a :class:`~statebound.envs.sql.SqlEnvironment` after
``reset``). :data:`AGENTS` is registered for the ``intercode-sql`` benchmark by entry point.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, Any

from statebound.agents.budget import actions_allowed
from statebound.agents.sql.baselines import build_plan_solve, build_react
from statebound.agents.sql.oracles import build_gold, build_replay, load_replay
from statebound.agents.sql.scoped import build_scoped
from statebound.agents.sql.stateflow import build_stateflow
from statebound.contract.benchmark import AgentSpec, Setup
from statebound.contract.converters import FlowAgent
from statebound.errors import DefinitionError
from statebound.flow import Flow

if TYPE_CHECKING:
    from statebound.agents.sql.options import SqlOptions

__all__ = ["AGENTS", "build_gold", "build_plan_solve", "build_react", "build_replay", "build_scoped",
           "build_stateflow", "load_replay"]


def _model_agent(build: Callable[..., Flow], summary: str, *, task_label: str = "", **fixed: Any) -> AgentSpec[SqlOptions]:
    """An agent whose flow ``build(max_turns=, max_tokens=, response_format=, **fixed)`` makes;
    ``task_label`` goes before the question (StateFlow's runner: ``Question: ``)."""

    def make(setup: Setup[SqlOptions]) -> FlowAgent:
        return FlowAgent(build(max_turns=actions_allowed(setup.max_turns), max_tokens=setup.options.reply_tokens,
                               response_format=setup.options.format, **fixed), task_label=task_label)

    return AgentSpec(build=make, summary=summary)


def _scoped_agent(summary: str, *, control: bool, named_first: bool = False) -> AgentSpec[SqlOptions]:
    """The scoped machine choosing with ``-O choice=`` (seeded random draws for the ``control``)."""

    def make(setup: Setup[SqlOptions]) -> FlowAgent:
        chooser = "random" if control else setup.options.choice
        return FlowAgent(build_scoped(chooser=chooser, named_first=named_first, max_turns=setup.max_turns))

    return AgentSpec(build=make, summary=summary, chooses=not control)


@cache
def _recorded(path: str) -> dict[str, list[str]]:
    return load_replay(path)


def _replayed_tasks(options: SqlOptions) -> list[str]:
    """The tasks a replay runs unless --tasks says otherwise: its file's."""
    return list(_recorded(str(options.replay))) if options.replay is not None else []


def _needs_replay_file(options: SqlOptions) -> None:
    if options.replay is None:
        raise DefinitionError("the replay agent needs recorded actions: -O replay=actions.jsonl")
    _recorded(options.replay)  # a bad file is reported now, naming its line


def _replay(setup: Setup[SqlOptions]) -> FlowAgent:
    return FlowAgent(build_replay(_recorded(str(setup.options.replay)), max_turns=actions_allowed(setup.max_turns)))


QUESTION = "Question: "  # how StateFlow's runner labels the task
_ABLATIONS = {"no_verify": "without Verify", "no_error": "without Error", "no_observe": "without Observe"}

AGENTS: dict[str, AgentSpec[SqlOptions]] = {
    "stateflow": _model_agent(build_stateflow, "StateFlow's SQL machine (StateFlow, Wu et al. 2024, 4.2)", view="stateflow",
                              task_label=QUESTION),
    "sf-agent": _model_agent(build_stateflow, "the same machine, a state's prompt sent to its own agent",
                             view="sf-agent", task_label=QUESTION),
    **{f"{view}-{ablation.replace('_', '-')}": _model_agent(build_stateflow, f"{view} {what} (ablation, 4.4)",
                                                             view=view, ablation=ablation, task_label=QUESTION)
       for view in ("stateflow", "sf-agent") for ablation, what in _ABLATIONS.items()},
    "react": _model_agent(build_react, "few-shot ReAct (InterCode's baseline)", refined=False),
    "react-refined": _model_agent(build_react, "ReAct with StateFlow's refined instruction", refined=True),
    "plan-solve": _model_agent(build_plan_solve, "Plan & Solve: a plan, then one query per step"),
    "stateflow-scoped": _scoped_agent("extension: the query built a part at a time, each part chosen by the "
                                      "model (-O choice=) among candidates from the schema", control=False),
    "stateflow-scoped-random": _scoped_agent("extension: stateflow-scoped with seeded random choices (the control)",
                                             control=True),
    "stateflow-scoped-named": _scoped_agent("extension: stateflow-scoped offering the tables and columns the "
                                            "question spells out first", control=False, named_first=True),
    "stateflow-scoped-named-random": _scoped_agent("extension: stateflow-scoped-named with seeded random choices "
                                                   "(its control)", control=True, named_first=True),
    "gold": AgentSpec(build=lambda setup: FlowAgent(build_gold()), summary="oracle: submits the gold query",
                      uses_model=False),
    "replay": AgentSpec(build=_replay, summary="oracle: runs recorded actions (-O replay=FILE)", uses_model=False,
                        check=_needs_replay_file, tasks=_replayed_tasks),
}
