"""The ALFWorld agents as the ``alfworld`` benchmark offers them (registered by entry point): ReAct,
StateAct and its ablations (the chain-of-states loop, :mod:`statebound.chain`), the StateFlow
machines per task type, our ``stateflow-scoped`` extension, and the walkthrough oracle.

Each agent gets the game's opening text and an :class:`~statebound.envs.alfworld.AlfworldEnv`
already reset on the game. With ``-O format=grammar`` every reply is held to its agent's shape
by a grammar made from the opening text (:mod:`statebound.agents.alfworld.grammar`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from statebound.agents.alfworld.alfchat import AlfChat
from statebound.agents.alfworld.grammar import (
    action_grammar,
    names_in,
    react_grammar,
    stateact_grammar,
)
from statebound.agents.alfworld.phases import build_phases
from statebound.agents.alfworld.prompts import react_prompt, stateact_prompt
from statebound.agents.alfworld.stateflow import AuthorsStateFlow
from statebound.agents.alfworld.walkthrough import play_walkthrough
from statebound.agents.budget import actions_allowed
from statebound.chain import (
    VARIANTS,
    ChainOfStates,
    ChainPolicy,
    ReactPolicy,
    StateStep,
    TurnPolicy,
    play,
)
from statebound.contract.benchmark import AgentSpec, Setup
from statebound.contract.converters import trace_of_flow, trace_of_loop
from statebound.contract.trace import ExitReason, Trace, TraceEntry
from statebound.envs.alfworld import AlfworldEnv, StateCheck, StateTracker, state_accuracy
from statebound.envs.alfworld.goals import parse_goal
from statebound.envs.base import StepResult
from statebound.errors import DefinitionError
from statebound.flow.choosers import ChoiceMethod
from statebound.llm.base import LLM

if TYPE_CHECKING:
    from statebound.agents.alfworld.options import AlfworldOptions

__all__ = ["AGENTS", "FlowAgentForGame", "LoopAgent", "TrackedState", "Walkthrough"]

Grammar = Callable[[str], str]  # a game's GBNF from its opening text


@dataclass(slots=True)
class TrackedState:
    """StateAct's state check (section 6.3): what the model wrote against the accepted actions."""

    tracker: StateTracker

    def check(self, step: StateStep) -> StateCheck:
        return StateCheck(step.location, step.inventory, self.tracker.state)

    def observe(self, result: StepResult) -> None:
        self.tracker.update(str(result.info["command"]), accepted=result.ok)


@dataclass(frozen=True, slots=True)
class LoopAgent:
    """ReAct or a chain-of-states variant: the prompt-continuation loop on one game."""

    policy: TurnPolicy
    prompt: Callable[[str, str], str]  # (task type, opening text) -> the prompt
    max_turns: int
    seed: int
    grammar: Grammar | None = None

    async def __call__(self, task: str, *, llm: LLM, env: AlfworldEnv) -> Trace:
        checker = TrackedState(StateTracker())
        episode = await play(env, self.prompt(env.task_type, task), llm, self.policy, max_turns=self.max_turns,
                             seed=self.seed, grammar=self.grammar(task) if self.grammar else None, checker=checker)
        return trace_of_loop(episode, meta=state_accuracy(episode.checks))


@dataclass(frozen=True, slots=True)
class FlowAgentForGame:
    """The StateFlow machine for the game's task type, built from the goal in its opening text;
    ``scoped``: each state picks among its scoped commands with ``chooser`` (a ``Pick`` method;
    ``"random"``: the control)."""

    max_turns: int
    scoped: bool = False
    grammar: Grammar | None = None
    chooser: ChoiceMethod = "grammar"
    seed: int = 0

    async def __call__(self, task: str, *, llm: LLM, env: AlfworldEnv) -> Trace:
        flow = build_phases(parse_goal(task), max_turns=self.max_turns, scoped=self.scoped,
                          grammar=self.grammar(task) if self.grammar else None, chooser=self.chooser,
                          seed=self.seed)
        return trace_of_flow(await flow.run(task, llm=llm, deps=env))


@dataclass(frozen=True, slots=True)
class Walkthrough:
    """The oracle: the game's stored walkthrough, command by command."""

    async def __call__(self, task: str, *, llm: LLM, env: AlfworldEnv) -> Trace:
        outcome = await asyncio.to_thread(play_walkthrough, env)
        entries = [TraceEntry(state="Walkthrough", role="tool", content=step["observation"],
                              data={"action": step["action"]}) for step in outcome.trajectory]
        return Trace(entries=tuple(entries), exit=ExitReason.FINAL if outcome.won else ExitReason.TURN_LIMIT,
                     exit_state="Walkthrough", meta={"cause": outcome.cause} if outcome.cause else {})


def _grammar(setup: Setup[AlfworldOptions], make: Callable[[tuple[str, ...]], str]) -> Grammar | None:
    if setup.options.format != "grammar":
        return None
    return lambda task: make(names_in(task))


def _react(setup: Setup[AlfworldOptions]) -> LoopAgent:
    return LoopAgent(ReactPolicy(), react_prompt, actions_allowed(setup.max_turns), setup.seed,
                     _grammar(setup, react_grammar))


def _chain(style: ChainOfStates) -> Callable[[Setup[AlfworldOptions]], LoopAgent]:
    def build(setup: Setup[AlfworldOptions]) -> LoopAgent:
        return LoopAgent(ChainPolicy(style=style), lambda task_type, task: stateact_prompt(task_type, task, style),
                         actions_allowed(setup.max_turns), setup.seed, _grammar(setup, lambda names: stateact_grammar(style, names)))

    return build


def _stateflow(*, scoped: bool, control: bool = False) -> Callable[[Setup[AlfworldOptions]], FlowAgentForGame]:
    def build(setup: Setup[AlfworldOptions]) -> FlowAgentForGame:
        grammar = None if scoped else _grammar(setup, action_grammar)
        chooser = "random" if control else setup.options.choice
        return FlowAgentForGame(actions_allowed(setup.max_turns), scoped=scoped, grammar=grammar, chooser=chooser,
                                seed=setup.seed)

    return build


def _alfchat(agents: int) -> Callable[[Setup[AlfworldOptions]], AlfChat]:
    return lambda setup: AlfChat(agents, actions_allowed(setup.max_turns), speaker=setup.options.speaker)


def _free_replies(options: AlfworldOptions) -> None:
    if options.format == "grammar":
        raise DefinitionError("this agent reads its authors' free replies; drop -O format=grammar (stateflow-phases takes it)")


_VARIANT_SUMMARIES = {
    "stateact": "chain of states: goal, location, inventory, thought, action (StateAct)",
    "stateact-no-thought": "StateAct without the thought (ablation)",
    "stateact-no-goal": "StateAct without the goal (ablation)",
    "stateact-no-state": "StateAct without location and inventory (ablation)",
    "stateact-json": "StateAct's steps written as JSON (appendix D)",
    "react-joined": "ReAct (joined): thought and action written at every turn, on StateAct's examples (its Table 2)",
}

AGENTS: dict[str, AgentSpec[Any]] = {
    "react": AgentSpec(build=_react, summary="few-shot ReAct (the ReAct paper's ALFWorld prompts)"),
    **{name: AgentSpec(build=_chain(style), summary=_VARIANT_SUMMARIES[name]) for name, style in VARIANTS.items()},
    "stateflow": AgentSpec(build=lambda setup: AuthorsStateFlow(actions_allowed(setup.max_turns)), env={"admissible": True},
                           check=_free_replies, summary="StateFlow's ALFWorld machine as the authors run it "
                           "(object check, Plan, Pick, WrongPick, ...; replies matched to admissible commands)"),
    **{f"alfchat-{n}agents": AgentSpec(build=_alfchat(n), env={"admissible": True}, check=_free_replies, summary=f"ALFChat ({n} agents), the StateFlow blog's baseline: "
                                       "AutoGen's assistant and executor" + (" and grounding agent" if n == 3 else "")
                                       + " in a group chat") for n in (2, 3)},
    "stateflow-phases": AgentSpec(build=_stateflow(scoped=False), summary="extension: our machine per task type "
                                  "(Find, Take, Clean/Heat/Cool, Put, UseLamp), this project's stateflow before 2026-11-25"),
    "stateflow-scoped": AgentSpec(build=_stateflow(scoped=True), chooses=True, env={"admissible": True},
                                  summary="extension: each state chooses among the admissible commands that serve it"),
    "stateflow-scoped-random": AgentSpec(
        build=_stateflow(scoped=True, control=True), uses_model=False, env={"admissible": True},
        summary="extension: stateflow-scoped with seeded random choices among the same commands (the control)"),
    "walkthrough": AgentSpec(build=lambda setup: Walkthrough(), summary="oracle: the game's stored walkthrough",
                             uses_model=False),
}
