"""Scoped actions: our extension of the StateFlow ALFWorld machine (agent ``stateflow-scoped``).

In the papers' machine every state may send any action; a small model sends the wrong kind (it
writes ``clean bowl 1 with microwave 1`` in Find, fifty times). Here each state lets the model
choose only among the commands the engine accepts now (TextWorld's admissible commands) that serve
the state's purpose, and a GBNF grammar of those commands holds the reply to one of them
(llama.cpp models). The model still picks which one; the machine decides what kind of action is due:

- ``Find``: go to a place not visited yet (in the episode, or since an object was put away), any
  place once all are, or open one;
- ``Take``: take the goal's object;
- ``Clean`` / ``Heat`` / ``Cool``: go to the sinkbasin / microwave / fridge, or use it on the object;
- ``Put``: go to the goal's receptacle, open it, or put the object in/on it;
- ``UseLamp``: use the desklamp, or go to a place not visited yet.

A state whose scope is empty now (nothing to take where the agent stands) offers every admissible
command, so a reply is always possible.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Sequence

from statebound.envs.alfworld import AlfworldEnv
from statebound.envs.alfworld.goals import Goal
from statebound.flow import RunContext

__all__ = ["TOOLS", "choice_grammar", "scoped_actions", "scoped_grammar", "visited_places"]

TOOLS = {"Clean": ("clean", "sinkbasin"), "Heat": ("heat", "microwave"), "Cool": ("cool", "fridge")}
_GO_TO = "go to "
_PUT_AWAY = ("You put the ", "You move the ")  # the answer to a put, with and without legacy_put


def _places(commands: Sequence[str], visited: Collection[str]) -> list[str]:
    """``go to`` commands to places not visited yet, or all of them once every place is."""
    going = [c for c in commands if c.startswith(_GO_TO)]
    return [c for c in going if c[len(_GO_TO):] not in visited] or going


def _matching(commands: Sequence[str], *patterns: str) -> list[str]:
    compiled = [re.compile(p) for p in patterns]
    return [c for c in commands if any(p.fullmatch(c) for p in compiled)]


def scoped_actions(state: str, goal: Goal, admissible: Sequence[str], visited: Collection[str]) -> list[str]:
    """The commands of ``admissible`` that ``state`` offers for ``goal`` (module docstring);
    ``visited``: the places the agent has gone to in this episode."""
    obj, rec = re.escape(goal.obj), re.escape(goal.receptacle or "")
    if state == "Find":
        scope = _places(admissible, visited) + _matching(admissible, r"open .+")
    elif state == "Take":
        scope = _matching(admissible, rf"take {obj} \d+ from .+")
    elif state in TOOLS:
        verb, tool = TOOLS[state]
        scope = _matching(admissible, rf"go to {tool} \d+", rf"{verb} {obj} \d+ with {tool} \d+")
    elif state == "Put":
        scope = _matching(admissible, rf"go to {rec} \d+", rf"open {rec} \d+", rf"put {obj} \d+ in/on {rec} \d+",
                          rf"move {obj} \d+ to {rec} \d+")  # the engine's own form, without legacy_put
    elif state == "UseLamp":
        scope = _matching(admissible, r"use desklamp \d+") + _places(admissible, visited)
    else:
        scope = []
    return scope or list(admissible)


def choice_grammar(actions: Sequence[str]) -> str:
    """A GBNF grammar whose only sentences are ``actions``."""
    if not actions:
        raise ValueError("a choice grammar needs at least one action")
    return "root ::= " + " | ".join(json.dumps(action) for action in actions)


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


def scoped_grammar(state: str, goal: Goal) -> Callable[[RunContext], str]:
    """``CallLLM(grammar=...)`` for ``state``: the choice among its scoped actions, computed at each
    call from the environment in ``ctx.deps`` (an ``AlfworldEnv(admissible=True)``)."""

    def grammar(ctx: RunContext) -> str:
        env: AlfworldEnv = ctx.deps
        return choice_grammar(scoped_actions(state, goal, env.admissible_commands(), visited_places(ctx)))

    return grammar
