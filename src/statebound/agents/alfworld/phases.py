"""Our ``stateflow-phases`` extension: one state machine per task type, moved by the game's observations.

This was the project's ``stateflow`` ALFWorld agent before issue #21, designed here since the paper
gives no ALFWorld machine; StateFlow's own machine (the authors' code) is
:mod:`statebound.agents.alfworld.stateflow`.

Every non-final state asks its own agent (SF_Agent view: the state's instruction never enters the
shared history) for one action and sends it to the environment. Transitions read the observation:

- ``Find`` (look for the object) -> ``Take`` once the object is in sight;
- ``Take`` -> the next phase once ``You pick up the <obj>``; back to ``Find`` if it went elsewhere;
- ``Clean`` / ``Heat`` / ``Cool`` -> ``Put`` once ``You clean/heat/cool the <obj>``;
- ``Put`` -> ``End`` once the object is put in/on the target (``puttwo``: back to ``Find`` after the
  first one);
- ``UseLamp`` (examine) -> ``End`` once ``You turn on the desklamp``;
- any state -> ``End`` when the environment says the episode is over (won or out of steps).

``scoped=True`` is our extension (agent ``stateflow-scoped``, :mod:`statebound.agents.alfworld.scoped`):
each state's reply is held to the admissible commands that serve its purpose.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from statebound.agents.alfworld.scoped import scoped_candidates
from statebound.agents.budget import transitions_for
from statebound.agents.turns import latest_reply, latest_tool_data
from statebound.envs.alfworld import AlfworldEnv
from statebound.envs.alfworld.goals import Goal
from statebound.flow import (
    Agent,
    CallLLM,
    CallTool,
    ChoiceMethod,
    Flow,
    Output,
    Pick,
    RunContext,
    State,
    ToolResult,
    always,
)

__all__ = ["SYSTEM", "act", "build_phases", "read_action"]

SYSTEM = (
    "Interact with a household to solve a task. Reply with exactly one action and nothing else. "
    "Actions: go to <place>, open <receptacle>, close <receptacle>, take <object> from <place>, "
    "put <object> in/on <place>, clean <object> with <sinkbasin>, heat <object> with <microwave>, "
    "cool <object> with <fridge>, use <object>."
)
_PROCESS = {"clean": ("Clean", "sinkbasin"), "heat": ("Heat", "microwave"), "cool": ("Cool", "fridge")}
_ACTION_PREFIX = re.compile(r"^\s*(?:>\s*|action\s*:\s*)+", re.IGNORECASE)


def read_action(reply: str) -> str:
    """The action in a reply: its first non-empty line without ``>`` or ``Action:``."""
    line = next((ln for ln in reply.splitlines() if ln.strip()), "")
    return _ACTION_PREFIX.sub("", line).strip().strip("`'\"").rstrip(".")


def act(ctx: RunContext) -> ToolResult:
    """The tool every state calls: send the model's action to the environment in ``ctx.deps``."""
    env: AlfworldEnv = ctx.deps
    result = env.step(read_action(latest_reply(ctx)))
    data = {"done": result.done, "won": result.info.get("won", False), "command": result.info.get("command")}
    return ToolResult(result.observation, ok=result.ok, data=data)


Test = Callable[[RunContext], bool]


def _observation(ctx: RunContext) -> str:
    entry = ctx.last_of("tool")
    return entry.content if entry else ""


def _over(ctx: RunContext) -> bool:
    return bool(latest_tool_data(ctx, since_entered=False).get("done"))


def _observed(pattern: str) -> Test:
    compiled = re.compile(pattern)
    return lambda ctx: compiled.search(_observation(ctx)) is not None


def _placements(obj: str, receptacle: str) -> re.Pattern[str]:
    return re.compile(rf"^You (?:put the {obj} (\d+) in/on|move the {obj} (\d+) to) the {receptacle} \d+")


def _in_sight(goal: Goal) -> Test:
    """The object is in the latest observation (``puttwo``: not counting one already put away)."""
    mention = re.compile(rf"\b{goal.obj} (\d+)")
    placed = _placements(goal.obj, goal.receptacle or "")

    def test(ctx: RunContext) -> bool:
        put_away = {m[1] or m[2] for e in ctx.history if e.source == "tool" and (m := placed.search(e.content))}
        return any(number not in put_away for number in mention.findall(_observation(ctx)))

    return test


def _placed(goal: Goal, times: int) -> Test:
    pattern = _placements(goal.obj, goal.receptacle or "")

    def test(ctx: RunContext) -> bool:
        done = sum(1 for e in ctx.history if e.source == "tool" and pattern.search(e.content))
        return done >= times and pattern.search(_observation(ctx)) is not None

    return test


def _acting(name: str, instruction: str, transitions: list[tuple[Test, str]], call: Callable[[str], Output],
            *, otherwise: str | None = None) -> State:
    """A state that acts once per visit (``call(name)`` asks the model); when no rule fires it
    goes to ``otherwise`` (itself)."""
    return State(
        name,
        agent=Agent(instruction),
        outputs=[call(name), CallTool(act, name="alfworld")],
        transitions=[(_over, "End"), *transitions, (always(), otherwise or name)],
    )


def build_phases(goal: Goal, *, max_turns: int = 50, max_tokens: int = 48, grammar: str | None = None,
               scoped: bool = False, chooser: ChoiceMethod = "grammar", seed: int = 0) -> Flow:
    """The machine for ``goal``'s task type (one transition per action, so ``max_turns`` transitions).
    ``grammar`` (format=grammar: :func:`statebound.agents.alfworld.grammar.action_grammar`)
    constrains every reply; ``scoped`` instead has each state pick among its scoped admissible
    commands with ``chooser`` (a :class:`Pick` method; ``seed`` fixes its ``random`` draws; the
    run's ``deps`` must then be an ``AlfworldEnv(admissible=True)``)."""
    obj, rec = goal.obj, goal.receptacle

    def call(state: str) -> Output:
        if scoped:
            return Pick(scoped_candidates(state, goal), method=chooser, name=state, seed=seed)
        return CallLLM(max_tokens=max_tokens, grammar=grammar)

    seen = _in_sight(goal)
    picked = _observed(rf"^You pick up the {obj} \d+")
    after_take = "UseLamp" if goal.task_type == "examine" else _PROCESS.get(goal.task_type, ("Put",))[0]
    states = [
        _acting("Find", f"Find a {obj}: go to the places where a {obj} may be, one at a time, and open "
                f"them if they are closed. Reply with one action, e.g. 'go to countertop 1'.",
                [(picked, after_take), (seen, "Take")], call),
        _acting("Take", f"You see a {obj}. Take it with 'take {obj} <number> from <place>'.",
                [(picked, after_take), (seen, "Take")], call, otherwise="Find"),
    ]
    if goal.task_type in _PROCESS:
        name, tool = _PROCESS[goal.task_type]
        verb = goal.task_type
        states.append(_acting(
            name, f"You hold the {obj}. Go to the {tool} and {verb} the {obj}: 'go to {tool} 1', "
            f"then '{verb} {obj} <number> with {tool} 1'.",
            [(_observed(rf"^You {verb} the {obj} \d+"), "Put")], call))
    if goal.task_type == "examine":
        states.append(_acting(
            "UseLamp", f"You hold the {obj}. Find a desklamp and turn it on: go to the place where "
            "it is, then 'use desklamp <number>'.",
            [(_observed(r"^You turn on the desklamp"), "End")], call))
    else:
        placed_all = [(_placed(goal, 2), "End"), (_placed(goal, 1), "Find")] if goal.task_type == "puttwo" \
            else [(_placed(goal, 1), "End")]
        states.append(_acting(
            "Put", f"You hold the {obj}. Put it in/on the {rec}: 'go to {rec} <number>', then "
            f"'put {obj} <number> in/on {rec} <number>'.", placed_all, call))
    states.append(State("End", final=True))
    return Flow(name=f"alfworld-{goal.task_type}{'-scoped' if scoped else ''}", initial="Find", states=states, system=SYSTEM,
                max_turns=transitions_for(max_turns))
