"""Scoped actions: our extension of the StateFlow ALFWorld machine (agent ``stateflow-scoped``).

In the papers' machine every state may send any action; a small model sends the wrong kind (it
writes ``clean bowl 1 with microwave 1`` in Find, fifty times). Here each state lets the model
choose only among the commands the engine accepts now (TextWorld's admissible commands) that serve
the state's purpose: a :class:`~statebound.flow.Pick` among those commands, by the chooser
``-O choice=`` names (``grammar`` by default here, as the record was made: greedy generation held
to the commands by a choice grammar). Each state has tiers, offered in order: the first tier with an admissible
command is what the model chooses from. So the step that completes the state is offered alone as
soon as it is possible, as the state's instruction asks, and moving on is offered only otherwise:

- ``Find``: open the closed receptacle here; else go to a place not visited yet (since the start,
  or since an object was put away); else go to any place;
- ``Take``: take the goal's object;
- ``Clean`` / ``Heat`` / ``Cool``: clean / heat / cool the object with the sinkbasin / microwave /
  fridge here; else go to one;
- ``Put``: put the object in/on the goal's receptacle here; else open it; else go to one not
  visited yet, else to any;
- ``UseLamp``: use the desklamp here; else go to a place not visited yet, else to any.

A state none of whose tiers is admissible now (nothing to take where the agent stands) offers
every admissible command, so a reply is always possible. The model chooses which place to search
next and which object or receptacle of a kind; the machine decides what kind of action is due.

The control (agent ``stateflow-scoped-random``) runs the very same machine with ``Pick``'s seeded
random draw among the same commands, so the difference between the two agents is what the
model's choices add. :func:`random_choice` is that draw as a function model (for machines that
send choice grammars).
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Callable, Collection, Sequence

from statebound.envs.alfworld import AlfworldEnv
from statebound.envs.alfworld.goals import Goal
from statebound.flow import RunContext, choice_grammar, offered
from statebound.llm.base import Request

__all__ = [
    "TOOLS",
    "choice_grammar",
    "offered",
    "random_choice",
    "scoped_actions",
    "scoped_candidates",
    "visited_places",
]

TOOLS = {"Clean": ("clean", "sinkbasin"), "Heat": ("heat", "microwave"), "Cool": ("cool", "fridge")}
_GO_TO = "go to "
_PUT_AWAY = ("You put the ", "You move the ")  # the answer to a put, with and without legacy_put


def _matching(commands: Sequence[str], *patterns: str) -> list[str]:
    compiled = [re.compile(p) for p in patterns]
    return [c for c in commands if any(p.fullmatch(c) for p in compiled)]


def _going(commands: Sequence[str], visited: Collection[str], place: str = r".+") -> list[list[str]]:
    """Two tiers of ``go to`` commands (to places matching ``place``): those not visited yet, then all."""
    going = _matching(commands, _GO_TO + place)
    return [[c for c in going if c[len(_GO_TO):] not in visited], going]


def _tiers(state: str, goal: Goal, admissible: Sequence[str], visited: Collection[str]) -> list[list[str]]:
    obj, rec = re.escape(goal.obj), re.escape(goal.receptacle or "")
    if state == "Find":
        return [_matching(admissible, r"open .+"), *_going(admissible, visited)]
    if state == "Take":
        return [_matching(admissible, rf"take {obj} \d+ from .+")]
    if state in TOOLS:
        verb, tool = TOOLS[state]
        return [_matching(admissible, rf"{verb} {obj} \d+ with {tool} \d+"),
                _matching(admissible, rf"go to {tool} \d+")]
    if state == "Put":
        put = _matching(admissible, rf"put {obj} \d+ in/on {rec} \d+",
                        rf"move {obj} \d+ to {rec} \d+")  # the engine's own form, without legacy_put
        return [put, _matching(admissible, rf"open {rec} \d+"), *_going(admissible, visited, rf"{rec} \d+")]
    if state == "UseLamp":
        return [_matching(admissible, r"use desklamp \d+"), *_going(admissible, visited)]
    return []


def scoped_actions(state: str, goal: Goal, admissible: Sequence[str], visited: Collection[str]) -> list[str]:
    """The commands of ``admissible`` that ``state`` offers for ``goal`` now: its first tier that
    has any (module docstring), else every admissible command; ``visited``: the places gone to."""
    return next((tier for tier in _tiers(state, goal, admissible, visited) if tier), list(admissible))


def random_choice(request: Request, *, seed: int = 0) -> str:
    """A model-free function model for requests that carry a choice grammar: one of the offered
    texts at random, the draw fixed by the request and ``seed`` (so runs repeat):
    ``-m function:statebound.agents.alfworld.scoped:random_choice --model-option grammar=true``."""
    if request.grammar is None:
        raise ValueError("random_choice answers requests that carry a choice grammar")
    seen = json.dumps([request.grammar, [m.content for m in request.messages or ()], *([seed] if seed else [])])
    draw = random.Random(int.from_bytes(hashlib.sha256(seen.encode("utf-8")).digest()[:8], "big"))
    return draw.choice(offered(request.grammar))


def visited_places(ctx: RunContext) -> set[str]:
    """The places the engine accepted a ``go to`` for since the run began or, after an object was
    put away (``puttwo``), since then: the search for the next object starts afresh."""
    visited: set[str] = set()
    for entry in ctx.history:
        if entry.source != "tool" or not entry.ok or not isinstance(entry.data, dict):
            continue
        if entry.content.startswith(_PUT_AWAY):
            visited.clear()
        command = str(entry.data.get("command", ""))
        if command.startswith(_GO_TO):
            visited.add(command[len(_GO_TO):])
    return visited


def scoped_candidates(state: str, goal: Goal) -> Callable[[RunContext], list[str]]:
    """``Pick``'s candidates for ``state``: its scoped actions, computed at each choice from the
    environment in ``ctx.deps`` (an ``AlfworldEnv(admissible=True)``)."""

    def candidates(ctx: RunContext) -> list[str]:
        env: AlfworldEnv = ctx.deps
        return scoped_actions(state, goal, env.admissible_commands(), visited_places(ctx))

    return candidates
