"""The ``intercode-bash`` benchmark: 200 tasks over four file systems, in a bubblewrap sandbox.

``statebound eval intercode-bash --agent stateflow`` runs it through the harness. Agents:
``stateflow``, ``sf-agent``, ``react``, ``plan-solve`` (model-driven), our extensions
``stateflow-rethink`` and ``sf-agent-rethink``, and the oracles ``gold`` and ``replay`` (``--option replay=FILE``, JSON lines ``{"task": ID, "actions": [...]}``). The
harness's ``max_turns`` (10) bounds the actions of an episode; at the limit it is submitted as it
stands. Options: ``replay``, ``observation_chars`` (350: what the model sees of one output),
``format`` (``free``, or ``grammar``: every reply constrained by a GBNF grammar, llama.cpp models
only) and ``reply_tokens`` (256: each model call's ``max_tokens``).

Each result has ``turns`` = actions sent, ``error_rate`` = failed share of executed commands,
``meta.fs`` and the reward parts ``p1``, ``p2``, ``p3`` with the counts of missing and extra changes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from statebound.agents.bash.baselines import build_plan_solve, build_react
from statebound.agents.bash.oracles import load_replay, play_actions, play_gold, replay_for
from statebound.agents.bash.stateflow import build_stateflow
from statebound.agents.response_format import (
    ResponseFormat,
    parse_response_format,
    require_grammar_support,
)
from statebound.bench.trajectory import entry, record_flow
from statebound.bench.types import EpisodeLimits, EpisodeResult, Task
from statebound.envs.base import StepResult
from statebound.envs.bash import BashEnv, load_tasks
from statebound.errors import DefinitionError
from statebound.flow import Flow
from statebound.llm.base import LLM

__all__ = ["AGENTS", "BashBenchmark", "make_benchmark"]

# each builder takes max_interactions=, max_tokens= and response_format=
FLOWS: dict[str, Callable[..., Flow]] = {
    "stateflow": lambda **kw: build_stateflow(view="stateflow", **kw),
    "sf-agent": lambda **kw: build_stateflow(view="sf-agent", **kw),
    # our extension: a Rethink state for a failed command written again (see build_stateflow)
    "stateflow-rethink": lambda **kw: build_stateflow(view="stateflow", rethink=True, **kw),
    "sf-agent-rethink": lambda **kw: build_stateflow(view="sf-agent", rethink=True, **kw),
    "react": build_react,
    "plan-solve": build_plan_solve,
}
AGENTS: tuple[str, ...] = (*FLOWS, "gold", "replay")


@dataclass
class BashBenchmark:
    """The benchmark; every episode gets its own :class:`BashEnv` (and so its own sandboxes)."""

    replay: str | None = None
    observation_chars: int = 350
    response_format: ResponseFormat = "free"  # the ``format`` option
    reply_tokens: int = 256  # max_tokens of each model call
    name: str = "intercode-bash"
    _replays: dict[str, list[str]] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.replay is not None:
            self._replays = load_replay(self.replay)
        self.response_format = parse_response_format(self.response_format, benchmark=self.name)

    def tasks(self) -> Sequence[Task]:
        return [Task(id=t.id, question=t.query, meta={"fs": t.fs}) for t in load_tasks()]

    def agents(self) -> Sequence[str]:
        return AGENTS

    async def run_episode(
        self, task: Task, agent: str, llm: LLM, *, seed: int, limits: EpisodeLimits
    ) -> EpisodeResult:
        if agent not in AGENTS:
            raise DefinitionError(
                f"intercode-bash has no agent {agent!r}; choose one of {', '.join(AGENTS)}"
            )
        if agent == "replay" and self.replay is None:
            raise DefinitionError("the replay agent needs a file: --option replay=actions.jsonl")
        if agent in FLOWS and self.response_format == "grammar":
            require_grammar_support(llm, benchmark=self.name)
        result = EpisodeResult(
            task=task.id, agent=agent, model=llm.model, seed=seed, meta=dict(task.meta)
        )
        env = BashEnv(observation_chars=self.observation_chars)
        try:
            question = await asyncio.to_thread(env.reset, task.id)
            if agent in FLOWS:
                flow = FLOWS[agent](max_interactions=limits.max_turns, max_tokens=self.reply_tokens,
                                    response_format=self.response_format)
                run = await flow.run(question, llm=llm, deps=env)
                record_flow(result, run, data_keys=("action", "outcome"))
            else:
                actions = (
                    replay_for(self._replays, task.id, str(self.replay))
                    if agent == "replay"
                    else None
                )
                played = await asyncio.to_thread(
                    (lambda: play_gold(env, task.id)) if actions is None
                    else (lambda: play_actions(env, actions, limit=limits.max_turns))
                )  # fmt: skip
                _record_actions(result, agent, question, played)
            if not env.submitted:  # the limit was reached: submit the episode as it stands
                await asyncio.to_thread(env.step, "submit")
            score, parts = await asyncio.to_thread(env.grade)
        finally:
            await asyncio.to_thread(env.close)
        result.reward, result.success = score.reward, score.success
        result.turns = env.actions
        result.error_rate = env.error_rate
        result.meta.update(
            p1=parts.p1,
            p2=parts.p2,
            p3=parts.p3,
            missing=len(parts.missing),
            extra=len(parts.extra),
        )
        return result


def _record_actions(
    result: EpisodeResult, agent: str, question: str, played: list[tuple[str, StepResult]]
) -> None:
    state = agent.capitalize()
    result.trajectory = [entry(state, "user", question)]
    for action, step in played:
        result.trajectory.append(entry(state, "assistant", action))
        result.trajectory.append(entry(state, "tool", step.observation, ok=step.ok))
    result.exit_state = state
    result.exit_reason = "submitted" if played and played[-1][1].done else "turn_limit"


def make_benchmark(**options: Any) -> BashBenchmark:
    """The registry's factory: ``replay`` (a JSONL file), ``observation_chars``, ``format`` and
    ``reply_tokens`` (strings accepted)."""
    known = {"replay", "observation_chars", "format", "reply_tokens"}
    unknown = set(options) - known
    if unknown:
        raise DefinitionError(
            f"unknown intercode-bash options {sorted(unknown)}; known: {sorted(known)}"
        )
    return BashBenchmark(
        replay=options.get("replay"),
        observation_chars=_positive(options, "observation_chars", 350),
        response_format=options.get("format", "free"),
        reply_tokens=_positive(options, "reply_tokens", 256),
    )


def _positive(options: dict[str, Any], key: str, default: int) -> int:
    try:
        value = int(options.get(key, default))
    except ValueError:
        raise DefinitionError(f"{key} must be an integer, got {options[key]!r}") from None
    if value < 1:
        raise DefinitionError(f"{key} must be at least 1, got {value}")
    return value
