"""InterCode-Bash agents: StateFlow's machine as the authors run it (both views), our extensions
(the output-end machine read from the paper's prompts, with and without Rethink), ReAct, Plan &
Solve, and the oracles ``gold`` and ``replay``. :data:`AGENTS` is registered for the
``intercode-bash`` benchmark by entry point."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from statebound.agents.bash.baselines import build_plan_solve, build_react, plan_steps
from statebound.agents.bash.oracles import load_replay, play_actions, replay_for
from statebound.agents.bash.output_end import build_output_end
from statebound.agents.bash.scoped import build_scoped
from statebound.agents.bash.stateflow import build_stateflow
from statebound.agents.bash.tools import action_from_reply, code_from_reply, execution_failed
from statebound.agents.bash.vocabulary import bundled_vocabulary
from statebound.agents.budget import actions_allowed
from statebound.contract.benchmark import AgentSpec, Setup
from statebound.contract.converters import FlowAgent, trace_of_actions
from statebound.contract.trace import Trace
from statebound.envs.bash import BashEnv, format_execute, get_task
from statebound.errors import DefinitionError
from statebound.flow import Flow
from statebound.llm.base import LLM

if TYPE_CHECKING:
    from statebound.agents.bash.options import BashOptions

__all__ = [
    "AGENTS",
    "action_from_reply",
    "build_output_end",
    "build_plan_solve",
    "build_react",
    "build_scoped",
    "build_stateflow",
    "code_from_reply",
    "execution_failed",
    "load_replay",
    "plan_steps",
    "play_actions",
]


def _model_agent(build: Callable[..., Flow], summary: str, *, task_label: str = "", **fixed: Any) -> AgentSpec[BashOptions]:
    """An agent whose flow ``build(max_turns=, max_tokens=, response_format=, **fixed)`` makes;
    ``task_label`` goes before the question (StateFlow's runner: ``Question: ``)."""

    def make(setup: Setup[BashOptions]) -> FlowAgent:
        flow = build(max_turns=actions_allowed(setup.max_turns), max_tokens=setup.options.reply_tokens,
                     response_format=setup.options.format, **fixed)
        return FlowAgent(flow, data_keys=("action", "outcome"), task_label=task_label)

    return AgentSpec(build=make, summary=summary)


def _scoped_agent(summary: str, *, control: bool, compose: bool = False) -> AgentSpec[BashOptions]:
    """The scoped machine over the vocabulary of every other task's gold command, choosing with
    ``-O choice=`` (seeded random draws for the ``control``)."""

    def make(setup: Setup[BashOptions]) -> FlowAgent:
        flow = build_scoped(chooser="random" if control else setup.options.choice,
                            max_turns=actions_allowed(setup.max_turns),
                            vocabulary=bundled_vocabulary(leave_out=setup.task.id), compose=compose)
        return FlowAgent(flow, data_keys=("action", "outcome", "part", "command"))

    return AgentSpec(build=make, summary=summary, uses_model=not control, chooses=not control, chat_choices=False)


@dataclass(frozen=True, slots=True)
class PlayActions:
    """A model-free agent: sends ``actions`` (at most ``limit`` before ``submit``) in state ``state``."""

    state: str
    actions: Sequence[str]
    limit: int

    async def __call__(self, task: str, *, llm: LLM, env: BashEnv) -> Trace:
        played = await asyncio.to_thread(play_actions, env, self.actions, limit=self.limit)
        return trace_of_actions(self.state, task, played, finished=bool(played) and played[-1][1].done)


@cache
def _replays(path: str) -> dict[str, list[str]]:
    return load_replay(path)


def _replayed_tasks(options: BashOptions) -> list[str]:
    """The tasks a replay runs unless --tasks says otherwise: its file's."""
    return list(_replays(str(options.replay))) if options.replay is not None else []


def _needs_replay_file(options: BashOptions) -> None:
    if options.replay is None:
        raise DefinitionError("the replay agent needs a file: -O replay=actions.jsonl")
    _replays(options.replay)


def _gold(setup: Setup[BashOptions]) -> PlayActions:
    return PlayActions("Gold", [format_execute(get_task(setup.task.id).gold), "submit"], limit=1)


def _nothing(setup: Setup[BashOptions]) -> PlayActions:
    return PlayActions("Nothing", [format_execute(NO_OP), "submit"], limit=1)


def _replay(setup: Setup[BashOptions]) -> PlayActions:
    path = str(setup.options.replay)
    return PlayActions("Replay", replay_for(_replays(path), setup.task.id, path), limit=actions_allowed(setup.max_turns))


QUESTION = "Question: "  # how StateFlow's runner labels the task
NO_OP = "true"  # the command of the ``nothing`` baseline: it changes nothing and prints nothing

AGENTS: dict[str, AgentSpec[BashOptions]] = {
    "stateflow": _model_agent(build_stateflow, "StateFlow's Bash machine as the authors run it (StateFlow, Wu et al. 2024, 4.2)",
                              view="stateflow", task_label=QUESTION),
    "sf-agent": _model_agent(build_stateflow, "the same machine, a state's prompt sent to its own agent",
                             view="sf-agent", task_label=QUESTION),
    "stateflow-output-end": _model_agent(build_output_end, "extension: the machine read from the paper's prompts "
                                         "(output ends the run, no output goes to Verify)", view="stateflow"),
    "sf-agent-output-end": _model_agent(build_output_end, "extension: stateflow-output-end, one agent per state",
                                        view="sf-agent"),
    "stateflow-rethink": _model_agent(build_output_end, "extension: stateflow-output-end with a Rethink state for a "
                                      "failed command written again", view="stateflow", rethink=True),
    "sf-agent-rethink": _model_agent(build_output_end, "extension: sf-agent-output-end with Rethink", view="sf-agent",
                                     rethink=True),
    "react": _model_agent(build_react, "few-shot ReAct"),
    "plan-solve": _model_agent(build_plan_solve, "Plan & Solve: a plan, then one command per step"),
    "stateflow-scoped": _scoped_agent("extension: the command built a stage at a time, each part chosen by the "
                                      "model (-O choice=) among the other tasks' gold stages and the sandbox's paths",
                                      control=False),
    "stateflow-scoped-random": _scoped_agent("extension: stateflow-scoped with seeded random choices (the control)",
                                             control=True),
    "stateflow-scoped-compose": _scoped_agent("extension: stateflow-scoped with a find on a path built a clause at "
                                              "a time (-type f, -name PATTERN...) from every find head's clauses",
                                              control=False, compose=True),
    "stateflow-scoped-compose-random": _scoped_agent("extension: stateflow-scoped-compose with seeded random "
                                                     "choices (the control)", control=True, compose=True),
    "gold": AgentSpec(build=_gold, summary="oracle: runs the gold command and submits", uses_model=False),
    "nothing": AgentSpec(build=_nothing, summary="baseline: runs 'true' (no change, no output) and submits: what "
                         "upstream's reward gives doing nothing", uses_model=False),
    "replay": AgentSpec(build=_replay, summary="oracle: runs recorded actions (-O replay=FILE)", uses_model=False,
                        check=_needs_replay_file, tasks=_replayed_tasks),
}
