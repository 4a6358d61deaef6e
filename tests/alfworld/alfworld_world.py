"""A scripted stand-in for the ALFWorld engine, for agent tests that need no real game."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from statebound.agents.alfworld.agents import TrackedState
from statebound.agents.alfworld.prompts import react_prompt, stateact_prompt
from statebound.chain import ChainPolicy, LoopEpisode, TurnPolicy, play
from statebound.envs.alfworld import FAILED_ACTION, StateTracker, rewrite_action
from statebound.envs.alfworld.commands import legacy_command
from statebound.envs.base import Score, StepResult
from statebound.llm.base import LLM


@dataclass
class ScriptedWorld:
    """Answers known actions from ``replies``; anything else is refused. ``winning`` wins the game."""

    task: str
    task_type: str
    replies: dict[str, str]
    winning: str
    max_steps: int = 50
    correct_put: bool = True
    actions: list[str] = field(default_factory=list)
    steps: int = 0
    won: bool = False
    failed_actions: int = 0

    def reset(self, task_id: str) -> str:
        """A new game, as the real engine starts one: no actions, steps or win yet."""
        self.actions.clear()
        self.steps = self.failed_actions = 0
        self.won = False
        return self.task

    def step(self, action: str) -> StepResult:
        rewrite = rewrite_action(action, correct_put=self.correct_put)
        self.actions.append(rewrite.command)
        self.steps += 1
        observation = self.replies.get(rewrite.command, FAILED_ACTION)
        self.failed_actions += observation == FAILED_ACTION
        self.won = self.won or rewrite.command == self.winning
        done = self.won or self.steps >= self.max_steps
        return StepResult(observation, ok=observation != FAILED_ACTION, done=done,
                          info={"command": rewrite.command, "rewrite": rewrite.kind, "won": self.won,
                                "limit": done and not self.won})

    def score(self) -> Score:
        return Score(reward=float(self.won), success=self.won)


class AdmissibleWorld(ScriptedWorld):
    """A scripted game that also lists its admissible commands (the ones it answers), as the prompts say them."""

    def admissible_commands(self) -> list[str]:
        return [legacy_command(command) for command in self.replies]


ROOM = "You are in the middle of a room. Looking quickly around you, you see a countertop 1, a fridge 1, a microwave 1, a sinkbasin 1, a desk 1, a sofa 1, and a shelf 1."


async def play_game(world: ScriptedWorld, llm: LLM, policy: TurnPolicy, *, max_turns: int = 50,
                    grammar: Callable[[str], str] | None = None) -> LoopEpisode:
    """What the ALFWorld loop agents do: reset the world, prompt for the policy, play with the
    state check."""
    task = world.reset("game")
    if isinstance(policy, ChainPolicy):
        prompt = stateact_prompt(world.task_type, task, policy.style)
    else:
        prompt = react_prompt(world.task_type, task)
    return await play(world, prompt, llm, policy, max_turns=max_turns, grammar=grammar(task) if grammar else None,
                      checker=TrackedState(StateTracker()))
