"""The prompt-continuation loop ReAct and StateAct share: prompt, reply, act, observe, repeat.

Each turn the whole prompt (few-shot examples, task, transcript so far) goes to the model: as a
plain prompt when the backend can continue text, else as one user message (as StateAct's
appendix C does). A :class:`TurnPolicy` says how a reply becomes an action and how the turn is
written back into the transcript: :class:`ReactPolicy` (one line, ``think:`` turns get ``OK.`` and
do not reach the environment) or :class:`ChainPolicy` (a chain-of-states step,
:mod:`statebound.chain.steps`). A :class:`StateChecker` compares the state the model wrote with the
environment's true state (StateAct section 6.3).

A prompt longer than the model's context window loses its oldest turns until it fits (the few-shot
examples and the task stay); episodes whose prompts fit are played unchanged. Turns go a quarter of
those kept at a time, not one by one: the shorter prompt then keeps the same start for several
turns, so a local model re-reads the history once every few turns instead of on every turn.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Protocol

from statebound.chain.steps import ChainOfStates, StateStep
from statebound.envs.base import Environment, StepResult
from statebound.errors import ContextOverflow
from statebound.exits import ExitReason
from statebound.llm.base import LLM, Completion, Message, Request, Usage

__all__ = [
    "ChainPolicy",
    "LoopEpisode",
    "ReactPolicy",
    "StateChecker",
    "Turn",
    "TurnPolicy",
    "TurnRecord",
    "play",
]

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
    """How replies become turns: reading a reply, writing the turn back."""

    @property
    def stop(self) -> tuple[str, ...]: ...

    @property
    def max_tokens(self) -> int: ...

    @property
    def tracks_state(self) -> bool: ...

    @property
    def repetition_limit(self) -> int | None: ...

    def read(self, reply: str) -> Turn: ...

    def append(self, turn: Turn, observation: str) -> str: ...


@dataclass(frozen=True, slots=True)
class ReactPolicy:
    """ReAct: one line per turn, ``think: ...`` or an action; the transcript is ``> turn\\nobs\\n>``."""

    stop: tuple[str, ...] = ("\n",)
    max_tokens: int = 100
    tracks_state: bool = False
    repetition_limit: int | None = None

    def read(self, reply: str) -> Turn:
        line = next((ln for ln in reply.splitlines() if ln.strip(" >")), "").strip().lstrip(">").strip()
        return Turn(line, line, think=line.startswith("think:"))

    def append(self, turn: Turn, observation: str) -> str:
        return f" {turn.text}\n{observation}\n>"


@dataclass(frozen=True, slots=True)
class ChainPolicy:
    """Chain of states: one step per turn (StateAct's appendix E text, or appendix D's JSON)."""

    style: ChainOfStates = field(default_factory=ChainOfStates)
    max_tokens: int = 300  # ours: the authors' cap lives in their llamp package, not in the release
    # StateAct's alfworld_run.py (LIMIT_CURRENT_REPETITIONS): the episode ends, without sending it,
    # at the fifth reply in a row equal to the one before (six identical cleaned replies)
    repetition_limit: int | None = 5

    @property
    def tracks_state(self) -> bool:
        return self.style.tracks_state

    @property
    def stop(self) -> tuple[str, ...]:
        """``alfworld_run.py``'s stop sequences: ``"\\n\\n"`` for text steps, ``"}\\n"``/``"\\n}"`` for JSON."""
        return ("}\n", "\n}") if self.style.as_json else ("\n\n",)

    def read(self, reply: str) -> Turn:
        if self.style.as_json and "}" not in reply:
            reply = reply.rstrip() + "\n}"  # the stop took the closing brace: put it back, as the authors do
        text = self.style.cut(reply.lstrip().lstrip(">"))
        step = self.style.parse(text)
        return Turn(text, step.action, step=step)

    def append(self, turn: Turn, observation: str) -> str:
        return f"{turn.text}\n{observation}\n>"


class StateChecker(Protocol):
    """Follows the environment's true state and compares what the model wrote with it."""

    def check(self, step: StateStep) -> Any:
        """Compare ``step``'s written state with the state before its action."""
        ...

    def observe(self, result: StepResult) -> None:
        """Follow the environment through one action's result."""
        ...


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
    checks: list[Any] = field(default_factory=list)  # what the StateChecker returned, per tracked step
    usage: Usage = field(default_factory=Usage)
    exit_reason: ExitReason = ExitReason.TURN_LIMIT
    turns_dropped: int = 0  # oldest turns left out of the prompt so that it fits the context
    grammar: str | None = None  # every reply's GBNF, when replies are held to a grammar
    repeated: bool = False  # ended by the policy's repetition limit


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
    env: Environment, prompt: str, llm: LLM, policy: TurnPolicy, *, max_turns: int = 50,
    seed: int | None = None, grammar: str | None = None, checker: StateChecker | None = None,
) -> LoopEpisode:
    """Play one episode in ``env`` (already reset) from ``prompt``: at most ``max_turns`` replies,
    ending early when the environment is done. It ends ``FINAL`` when the environment ended it for
    the agent's action, ``TURN_LIMIT`` when the environment's own limit (``info["limit"]``) or
    ``max_turns`` ended it, or the policy's repetition limit (``episode.repeated``)."""
    episode = LoopEpisode(prompt=prompt, grammar=grammar)
    transcript: list[str] = []  # one entry per turn, as written back into the prompt
    repeats = 0  # replies in a row equal to the one before
    for _ in range(max_turns):
        completion = await _complete_within_context(llm, episode, transcript, policy, seed)
        episode.usage = episode.usage + completion.usage
        turn = policy.read(completion.text)
        previous = episode.turns[-1] if episode.turns else None
        repeats = repeats + 1 if previous is not None and policy.read(previous.reply).text == turn.text else 0
        if policy.repetition_limit is not None and repeats == policy.repetition_limit:
            episode.repeated = True  # exit_reason stays TURN_LIMIT: a limit ended it, not the agent
            break
        if turn.think:
            record = TurnRecord(completion.text, turn.action, THINK_OBSERVATION, True, True, completion.usage)
            done = False
        else:
            if checker is not None and policy.tracks_state and turn.step is not None:
                episode.checks.append(checker.check(turn.step))
            result = await asyncio.to_thread(env.step, turn.action)
            if checker is not None:
                checker.observe(result)
            record = TurnRecord(completion.text, turn.action, result.observation, result.ok, False,
                                completion.usage, result.info.get("rewrite"))
            done = result.done
        episode.turns.append(record)
        transcript.append(policy.append(turn, record.observation))
        if done:
            episode.exit_reason = ExitReason.TURN_LIMIT if result.info.get("limit") else ExitReason.FINAL
            break
    return episode
