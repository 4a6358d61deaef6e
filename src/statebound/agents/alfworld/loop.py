"""The prompt-continuation loop ReAct and StateAct share: prompt, reply, act, observe, repeat.

Each turn the whole prompt (few-shot examples, task, transcript so far) goes to the model: as a
plain prompt when the backend can continue text, else as one user message (as StateAct's
appendix C does). A :class:`TurnPolicy` says how a reply becomes an action and how the turn is
written back into the transcript. ReAct's ``think:`` turns get ``OK.`` and do not reach the
environment. When the policy tracks state, the location and inventory the model wrote are checked
against :class:`~statebound.envs.alfworld.StateTracker` (StateAct section 6.3).

A prompt longer than the model's context window loses its oldest turns until it fits (the few-shot
examples and the task stay); games whose prompts fit are played unchanged. Turns go a quarter of
those kept at a time, not one by one: the shorter prompt then keeps the same start for several
turns, so a local model re-reads the history once every few turns instead of on every turn.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Protocol

from statebound.agents.alfworld.chain_of_states import ChainOfStates, StateStep
from statebound.agents.alfworld.grammar import GameGrammar
from statebound.agents.alfworld.prompts import react_prompt, stateact_prompt
from statebound.envs.alfworld import AlfworldEnv, StateCheck, StateTracker
from statebound.errors import ContextOverflow
from statebound.llm.base import LLM, Completion, Message, Request, Usage

__all__ = ["LoopEpisode", "ReactPolicy", "StateActPolicy", "Turn", "TurnPolicy", "TurnRecord", "play"]

THINK_OBSERVATION = "OK."
DROP_SHARE = 4  # on a context overflow, leave out 1/DROP_SHARE of the kept turns (at least one)


@dataclass(frozen=True, slots=True)
class Turn:
    """A reply read as a turn: the text kept in the transcript and the action in it."""

    text: str
    action: str
    think: bool = False
    step: StateStep | None = None


class TurnPolicy(Protocol):
    """How replies become turns: prompt, reading a reply, writing the turn back."""

    @property
    def stop(self) -> tuple[str, ...]: ...

    @property
    def max_tokens(self) -> int: ...

    @property
    def tracks_state(self) -> bool: ...

    @property
    def grammar(self) -> GameGrammar | None: ...

    def prompt(self, task_type: str, task: str) -> str: ...

    def read(self, reply: str) -> Turn: ...

    def append(self, turn: Turn, observation: str) -> str: ...


@dataclass(frozen=True, slots=True)
class ReactPolicy:
    """ReAct: one line per turn, ``think: ...`` or an action; the transcript is ``> turn\\nobs\\n>``."""

    stop: tuple[str, ...] = ("\n",)
    max_tokens: int = 100
    tracks_state: bool = False
    grammar: GameGrammar | None = None  # format=grammar (statebound.agents.alfworld.grammar)

    def prompt(self, task_type: str, task: str) -> str:
        return react_prompt(task_type, task)

    def read(self, reply: str) -> Turn:
        line = next((ln for ln in reply.splitlines() if ln.strip(" >")), "").strip().lstrip(">").strip()
        return Turn(line, line, think=line.startswith("think:"))

    def append(self, turn: Turn, observation: str) -> str:
        return f" {turn.text}\n{observation}\n>"


@dataclass(frozen=True, slots=True)
class StateActPolicy:
    """StateAct: a chain-of-states step per turn (appendix E, or appendix D's JSON)."""

    style: ChainOfStates = field(default_factory=ChainOfStates)
    stop: tuple[str, ...] = ("\n\n", "\n>")
    max_tokens: int = 300
    grammar: GameGrammar | None = None  # format=grammar (statebound.agents.alfworld.grammar)

    @property
    def tracks_state(self) -> bool:
        return self.style.tracks_state

    def prompt(self, task_type: str, task: str) -> str:
        return stateact_prompt(task_type, task, self.style)

    def read(self, reply: str) -> Turn:
        text = self.style.cut(reply.lstrip().lstrip(">"))
        step = self.style.parse(text)
        return Turn(text, step.action, step=step)

    def append(self, turn: Turn, observation: str) -> str:
        return f"{turn.text}\n{observation}\n>"


@dataclass(frozen=True, slots=True)
class TurnRecord:
    """One turn of an episode, for the trajectory."""

    reply: str
    action: str
    observation: str
    ok: bool
    think: bool
    usage: Usage
    rewrite: str | None = None


@dataclass(slots=True)
class LoopEpisode:
    """What :func:`play` returns; the environment's ``score()`` has the outcome."""

    prompt: str
    turns: list[TurnRecord] = field(default_factory=list)
    checks: list[StateCheck] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    exit_reason: str = "turn_limit"
    turns_dropped: int = 0  # oldest turns left out of the prompt so that it fits the context
    grammar: str | None = None  # every reply's GBNF (format=grammar), made from the game's opening


def _request(llm: LLM, text: str, policy: TurnPolicy, seed: int | None, grammar: str | None) -> Request:
    options = {"stop": policy.stop, "max_tokens": policy.max_tokens, "temperature": 0.0, "seed": seed,
               "grammar": grammar}
    if llm.capabilities.completion:
        return Request(prompt=text, **options)  # type: ignore[arg-type]
    return Request(messages=(Message("user", text),), **options)  # type: ignore[arg-type]


async def _complete_within_context(
    llm: LLM, episode: LoopEpisode, transcript: list[str], policy: TurnPolicy, seed: int | None,
) -> Completion:
    """The model's reply to the prompt and transcript, leaving out the oldest turns that do not fit."""
    while True:
        kept = transcript[episode.turns_dropped :]
        try:
            return await llm.complete(_request(llm, episode.prompt + "".join(kept), policy, seed, episode.grammar))
        except ContextOverflow:
            if not kept:
                raise  # the examples and the task alone do not fit
            episode.turns_dropped += max(1, len(kept) // DROP_SHARE)


async def play(
    env: AlfworldEnv, task_id: str, llm: LLM, policy: TurnPolicy, *, max_turns: int = 50,
    seed: int | None = None,
) -> LoopEpisode:
    """Play one game: at most ``max_turns`` replies, ending early when the environment is done."""
    task = await asyncio.to_thread(env.reset, task_id)
    grammar = policy.grammar(task) if policy.grammar is not None else None
    episode = LoopEpisode(prompt=policy.prompt(env.task_type, task), grammar=grammar)
    transcript: list[str] = []  # one entry per turn, as written back into the prompt
    tracker = StateTracker()
    for _ in range(max_turns):
        completion = await _complete_within_context(llm, episode, transcript, policy, seed)
        episode.usage = episode.usage + completion.usage
        turn = policy.read(completion.text)
        if turn.think:
            record = TurnRecord(completion.text, turn.action, THINK_OBSERVATION, True, True, completion.usage)
            done = False
        else:
            gold = tracker.state
            result = await asyncio.to_thread(env.step, turn.action)
            if policy.tracks_state and turn.step is not None:
                episode.checks.append(StateCheck(turn.step.location, turn.step.inventory, gold))
            tracker.update(result.info["command"], accepted=result.ok)
            record = TurnRecord(completion.text, turn.action, result.observation, result.ok, False,
                                completion.usage, result.info["rewrite"])
            done = result.done
        episode.turns.append(record)
        transcript.append(policy.append(turn, record.observation))
        if done:
            episode.exit_reason = "won" if env.won else "step_limit"
            break
    return episode
