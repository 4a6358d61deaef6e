"""GBNF grammars for ALFWorld replies (``--option format=grammar``, llama.cpp models only).

Every action the grammars allow has one of the forms the prompts teach (``go to cabinet 1``,
``take apple 1 from countertop 2``, ``put apple 1 in/on fridge 1``, ...) and names only things the
game's opening text names: the receptacles of the room, the object and receptacle of the goal, and
the desklamp (:func:`names_in`). Numbers have one or two digits, as in every game. The grammar
fixes the vocabulary and the shape, not the choice: ``take apple 1 from cabinet 3`` is well formed
and still refused by the engine when the apple is elsewhere.

- ``stateflow``: the reply is one action;
- ``react``: after the prompt's ``>``, `` think: <one line>`` or `` <action>``;
- StateAct variants: the step exactly as :meth:`ChainOfStates.render` writes it (text or JSON),
  each field on one bounded line and the ``action`` field an action.

Each function takes the game's names; ``names=None`` allows any lowercase word (one game's
grammar is then every game's).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable

from statebound.chain.steps import FIELDS, ChainOfStates, StateStep
from statebound.envs.alfworld.goals import parse_goal

__all__ = [
    "FIELD_CHARS",
    "THOUGHT_CHARS",
    "GameGrammar",
    "action_grammar",
    "names_in",
    "react_grammar",
    "stateact_grammar",
]

# The longest thought in the annotated examples has 385 characters, every other field under 50.
THOUGHT_CHARS = 400
FIELD_CHARS = 120

# A game's grammar from its opening text (room and task), as the agents receive it.
GameGrammar = Callable[[str], str]

_NAMED = re.compile(r"\b([a-z]+) \d+\b")
_TOOLS = ("desklamp",)  # examine tasks turn it on; the task sentence says "the desklamp"


def names_in(task: str) -> tuple[str, ...]:
    """The names a game's opening text gives: the room's receptacles, the goal's object and
    receptacle, and the desklamp; sorted."""
    goal = parse_goal(task)
    named = {*_NAMED.findall(task), goal.obj, *_TOOLS, *([goal.receptacle] if goal.receptacle else [])}
    return tuple(sorted(named))


def _action_rules(names: Iterable[str] | None) -> str:
    name = "[a-z]+" if names is None else " | ".join(json.dumps(n) for n in names)
    return "\n".join([
        'action ::= "go to " thing | "open " thing | "close " thing | "take " thing " from " thing'
        ' | "put " thing " in/on " thing | ("clean " | "heat " | "cool ") thing " with " thing'
        ' | "use " thing | "examine " thing | "look" | "inventory"',
        'thing ::= name " " [1-9] [0-9]?',
        f"name ::= {name}",
    ])  # fmt: skip


def action_grammar(names: Iterable[str] | None = None) -> str:
    """A reply that is one action (the StateFlow machine's states)."""
    return f"root ::= action\n{_action_rules(names)}"


def react_grammar(names: Iterable[str] | None = None) -> str:
    """ReAct's continuation of ``>``: a ``think:`` line or an action."""
    return "\n".join([
        'root ::= " "? ("think: " thought | action)',
        f"thought ::= [^\\n]{{1,{THOUGHT_CHARS}}}",
        _action_rules(names),
    ])  # fmt: skip


def stateact_grammar(style: ChainOfStates, names: Iterable[str] | None = None) -> str:
    """A chain-of-states step in ``style`` (after the prompt's ``>``)."""
    marks = {name: f"@{name}@" for name in FIELDS}
    template = style.render(StateStep.from_mapping(marks))
    parts: list[str] = []
    for name in style.fields:
        before, template = template.split(marks[name], 1)
        parts += [_literal(before), name]
    parts.append(_literal(template))
    excluded = '\\n"\\\\' if style.as_json else "\\n"  # JSON values: no quotes or backslashes
    rules = [f"root ::= {' '.join(part for part in parts if part)}"]
    least = 0 if style.as_json else 1  # JSON writes an empty value as ""
    rules += [f"{name} ::= [^{excluded}]{{{least},{THOUGHT_CHARS if name == 'thought' else FIELD_CHARS}}}"
              for name in style.fields if name != "action"]  # fmt: skip
    return "\n".join([*rules, _action_rules(names)])


def _literal(text: str) -> str:
    """``text`` as a GBNF string literal (``""`` for nothing)."""
    return json.dumps(text) if text else ""
