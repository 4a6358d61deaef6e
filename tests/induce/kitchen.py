"""A small kitchen game that lists the actions it accepts, for induction tests that need no engine:
find the object among the places, take it, (cool it in the fridge,) put it in the goal's place."""

from __future__ import annotations

from collections.abc import Sequence

from statebound.contract.trace import Step
from statebound.envs.base import Score, StepResult
from statebound.induce.learn import Demonstration

PLACES = ("counter 1", "fridge 1", "shelf 1", "table 1", "sink 1")


def task_text(kind: str, obj: str, goal: str) -> str:
    return (f"You are in a kitchen; you see {', '.join(PLACES)}.\n"
            f"Your task is to: {'cool some' if kind == 'cool' else 'put some'} {obj} in {goal}.")


class Kitchen:
    """One game: ``obj`` lies at ``where``; ``kind`` is ``put`` or ``cool`` (cool it first)."""

    def __init__(self, kind: str, obj: str, where: str, goal: str, *, max_steps: int = 12) -> None:
        self.kind, self.obj, self.where, self.goal, self.max_steps = kind, obj, where, goal, max_steps
        self.at, self.holding, self.cool, self.won, self.steps = None, False, False, False, 0

    def reset(self, task_id: str) -> str:
        self.at, self.holding, self.cool, self.won, self.steps = None, False, False, False, 0
        return task_text(self.kind, self.obj, self.goal)

    def offered_actions(self) -> list[str]:
        actions = [f"go to {place}" for place in PLACES]
        if self.at == self.where and not self.holding and not self.won:
            actions.append(f"take {self.obj} 1 from {self.where}")
        if self.holding and self.at == "fridge 1":
            actions.append(f"cool {self.obj} 1 with fridge 1")
        if self.holding and self.at and self.at.startswith(self.goal):
            actions.append(f"put {self.obj} 1 in {self.at}")
        return [*actions, "look"]

    def step(self, action: str) -> StepResult:
        if action not in self.offered_actions():
            self.steps += 1
            return StepResult("Nothing happens.", ok=False, done=self.steps >= self.max_steps)
        self.steps += 1
        if action.startswith("go to "):
            self.at = action[len("go to "):]
            seen = f"a {self.obj} 1" if self.at == self.where and not self.holding else "nothing"
            observation = f"On the {self.at}, you see {seen}."
        elif action.startswith("take "):
            self.holding, observation = True, f"You pick up the {self.obj} 1."
        elif action.startswith("cool "):
            self.cool, observation = True, f"You cool the {self.obj} 1."
        elif action.startswith("put "):
            self.holding, self.won = False, self.kind == "put" or self.cool
            observation = f"You put the {self.obj} 1 in the {self.at}."
        else:
            observation = "You are in a kitchen."
        return StepResult(observation, done=self.won or self.steps >= self.max_steps, info={"won": self.won})

    def score(self) -> Score:
        return Score(reward=float(self.won), success=self.won)

    def close(self) -> None:
        return None


def slots(text: str) -> dict[str, str]:
    """The kitchen's task slots: the object and the goal place's kind."""
    words = text.rstrip(".").split()
    return {"object": words[-3], "receptacle": words[-1]}


def solved(kind: str, obj: str, where: str, goal: str, task: str) -> Demonstration:
    """The expert's episode: straight to the object, (to the fridge,) to the goal."""
    game = Kitchen(kind, obj, where, goal)
    text = game.reset(task)
    plan = [f"go to {where}", f"take {obj} 1 from {where}"]
    if kind == "cool":
        plan += ["go to fridge 1", f"cool {obj} 1 with fridge 1"]
    plan += [f"go to {goal} 1", f"put {obj} 1 in {goal} 1"]
    steps: list[Step] = []
    for action in plan:
        offered = tuple(game.offered_actions())
        result = game.step(action)
        steps.append(Step(action=action, observation=result.observation, ok=result.ok, offered=offered))
    assert game.won, plan
    return Demonstration(task, kind, text, slots(text), steps)


def lessons(games: Sequence[tuple[str, str, str, str]]) -> list[Demonstration]:
    return [solved(*game, task=f"{game[0]}-{i}") for i, game in enumerate(games)]
