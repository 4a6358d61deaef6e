"""The ``alfworld`` benchmark: 134 games, agents ReAct, StateAct (+ ablations), StateFlow, walkthrough,
and our extension ``stateflow-scoped`` (:mod:`statebound.agents.alfworld.scoped`; llama.cpp models).

``statebound eval alfworld --agent stateact`` runs it through the harness. Options (``--option``):
``max_steps`` (50), ``correct_put`` (StateAct's put correction, off), ``legacy_put`` (on: accept and
speak the prompts' ``put X in/on Y``), ``format`` (``free``, the default, or ``grammar``: every
reply held to the shape its agent reads, llama.cpp models only; see
:mod:`statebound.agents.alfworld.grammar`). The step limit is the benchmark's own (50 actions, as in
ReAct and StateAct), so the harness's ``max_turns`` is not used.

Each result has ``turns`` = environment steps, ``meta.task_type``, ``meta.steps`` and the counts
``put_corrections``, ``legacy_puts``, ``failed_actions``; StateAct variants that track state add
``state_accuracy``, ``state_location_accuracy``, ``state_inventory_accuracy`` and ``state_steps``.
Reports add ``REPORT_COLUMNS``: state-tracking accuracy over all tracked steps (StateAct section
6.3; blank for agents that do not track state) and put corrections per game.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from statebound.agents.alfworld.chain_of_states import VARIANTS
from statebound.agents.alfworld.grammar import (
    GameGrammar,
    action_grammar,
    names_in,
    react_grammar,
    stateact_grammar,
)
from statebound.agents.alfworld.loop import (
    LoopEpisode,
    ReactPolicy,
    StateActPolicy,
    TurnPolicy,
    play,
)
from statebound.agents.alfworld.stateflow import build_flow
from statebound.agents.alfworld.walkthrough import play_walkthrough
from statebound.agents.response_format import (
    ResponseFormat,
    parse_response_format,
    require_grammar_support,
)
from statebound.bench.columns import MetaColumn
from statebound.bench.trajectory import entry, record_flow
from statebound.bench.types import EpisodeLimits, EpisodeResult, Task
from statebound.envs.alfworld import AlfworldEnv, list_games, state_accuracy
from statebound.envs.alfworld.goals import parse_goal
from statebound.errors import DefinitionError
from statebound.flow import RunResult
from statebound.llm.base import LLM

__all__ = ["AGENTS", "REPORT_COLUMNS", "AlfworldBenchmark", "make_benchmark"]

AGENTS: tuple[str, ...] = ("react", *VARIANTS, "stateflow", "stateflow-scoped", "walkthrough")
SCOPED = "stateflow-scoped"  # our extension: each state's replies held to its admissible commands

# Accuracies are per episode; weighting by its tracked steps gives the share of all steps.
REPORT_COLUMNS: tuple[MetaColumn, ...] = (
    MetaColumn("state_accuracy", "State acc %", scale=100, weight="state_steps"),
    MetaColumn("state_location_accuracy", "Location acc %", scale=100, weight="state_steps"),
    MetaColumn("state_inventory_accuracy", "Inventory acc %", scale=100, weight="state_steps"),
    MetaColumn("put_corrections", "Put corrections/game"),
    MetaColumn("turns_dropped", "Turns cut to fit/game", missing=0.0),
)


def _flag(value: Any) -> bool:
    if isinstance(value, str):
        if value.lower() not in {"1", "0", "true", "false", "yes", "no", "on", "off"}:
            raise DefinitionError(f"expected a boolean option (true/false), got {value!r}")
        return value.lower() in {"1", "true", "yes", "on"}
    return bool(value)


@dataclass
class AlfworldBenchmark:
    """The benchmark; one fresh :class:`AlfworldEnv` per episode (episodes share nothing)."""

    max_steps: int = 50
    correct_put: bool = False
    legacy_put: bool = True
    response_format: ResponseFormat = "free"  # the ``format`` option
    name: str = "alfworld"

    def tasks(self) -> Sequence[Task]:
        return [Task(id=g.id, question=g.name, meta={"task_type": g.task_type}) for g in list_games()]

    def agents(self) -> Sequence[str]:
        return AGENTS

    def make_env(self, *, admissible: bool = False) -> AlfworldEnv:
        return AlfworldEnv(max_steps=self.max_steps, correct_put=self.correct_put, legacy_put=self.legacy_put,
                           admissible=admissible)

    async def run_episode(
        self, task: Task, agent: str, llm: LLM, *, seed: int, limits: EpisodeLimits
    ) -> EpisodeResult:
        if agent not in AGENTS:
            raise DefinitionError(f"alfworld has no agent {agent!r}; choose one of {', '.join(AGENTS)}")
        grammar = self._grammar(agent, llm)
        env = self.make_env(admissible=agent == SCOPED)
        result = EpisodeResult(task=task.id, agent=agent, model=llm.model, seed=seed, meta=dict(task.meta))
        try:
            if agent == "walkthrough":
                outcome = await asyncio.to_thread(play_walkthrough, env, task.id)
                result.trajectory = [entry("Walkthrough", "tool", t["observation"], action=t["action"])
                                     for t in outcome.trajectory]
                result.exit_reason = "won" if outcome.won else outcome.cause
            elif agent in ("stateflow", SCOPED):
                record_flow(result, await self._run_flow(env, task, llm, grammar, scoped=agent == SCOPED))
            else:
                policy: TurnPolicy = (ReactPolicy(grammar=grammar) if agent == "react"
                                      else StateActPolicy(style=VARIANTS[agent], grammar=grammar))
                _record_loop(result, await play(env, task.id, llm, policy, max_turns=self.max_steps, seed=seed))
            _record_score(result, env)
        finally:
            await asyncio.to_thread(env.close)
        return result

    async def _run_flow(self, env: AlfworldEnv, task: Task, llm: LLM, grammar: GameGrammar | None,
                        *, scoped: bool) -> RunResult:
        text = await asyncio.to_thread(env.reset, task.id)
        flow = build_flow(parse_goal(text), max_steps=self.max_steps, grammar=grammar(text) if grammar else None,
                          scoped=scoped)
        return await flow.run(text, llm=llm, deps=env)

    def _grammar(self, agent: str, llm: LLM) -> GameGrammar | None:
        """How to make the GBNF every reply of ``agent`` is held to in a game, from the game's
        opening text (``None`` with ``format=free``, and for ``stateflow-scoped``, whose states
        make their own grammars whatever the format)."""
        if agent == SCOPED:
            require_grammar_support(llm, benchmark=self.name, needed_by=SCOPED)
        if self.response_format == "free" or agent in ("walkthrough", SCOPED):
            return None
        require_grammar_support(llm, benchmark=self.name)
        if agent == "react":
            return lambda task: react_grammar(names_in(task))
        if agent == "stateflow":
            return lambda task: action_grammar(names_in(task))
        return lambda task: stateact_grammar(VARIANTS[agent], names_in(task))


def _record_score(result: EpisodeResult, env: AlfworldEnv) -> None:
    score = env.score()
    result.success, result.reward = score.success, score.reward
    result.turns = env.steps
    result.error_rate = env.failed_actions / env.steps if env.steps else 0.0
    result.meta.update({key: int(value) for key, value in score.metrics.items()})


def _record_loop(result: EpisodeResult, episode: LoopEpisode) -> None:
    result.prompt_tokens = episode.usage.prompt_tokens
    result.completion_tokens = episode.usage.completion_tokens
    result.llm_calls = episode.usage.calls
    result.exit_reason = episode.exit_reason
    result.meta["llm_turns"] = len(episode.turns)
    result.meta["turns_dropped"] = episode.turns_dropped
    result.meta.update(state_accuracy(episode.checks))
    result.trajectory = [entry(None, "user", episode.prompt)]
    for turn in episode.turns:
        result.trajectory.append(entry(None, "assistant", turn.reply, usage=turn.usage, action=turn.action))
        result.trajectory.append(entry(None, "tool", turn.observation, ok=turn.ok, rewrite=turn.rewrite))


def make_benchmark(**options: Any) -> AlfworldBenchmark:
    """The registry's factory: ``max_steps``, ``correct_put``, ``legacy_put``, ``format`` (strings
    accepted)."""
    known = {"max_steps", "correct_put", "legacy_put", "format"}
    unknown = set(options) - known
    if unknown:
        raise DefinitionError(f"unknown alfworld options {sorted(unknown)}; known: {sorted(known)}")
    max_steps = int(options.get("max_steps", 50))
    if max_steps < 1:
        raise DefinitionError(f"max_steps must be at least 1, got {max_steps}")
    return AlfworldBenchmark(
        max_steps=max_steps,
        correct_put=_flag(options.get("correct_put", False)),
        legacy_put=_flag(options.get("legacy_put", True)),
        response_format=parse_response_format(options.get("format", "free"), benchmark="alfworld"),
    )
