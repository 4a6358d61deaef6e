"""States and their compiled transitions: the parts a :class:`~statebound.flow.machine.Machine`
is built from."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

from statebound.errors import DefinitionError
from statebound.flow.agent import Agent
from statebound.flow.context import RunContext
from statebound.flow.outputs.base import Output
from statebound.flow.rules import Decider, Rule, RuleEdge, Test, as_rule

__all__ = ["Edge", "State", "Transition", "compile_transition"]

Transition = tuple[Rule | Callable[[RunContext[Any, Any]], bool], str] | Decider
Edge = Decider  # a compiled transition (the name this module always gave it)


class State:
    """A state: what happens on entering it (``outputs``, in order) and where to go next
    (``transitions``, first match wins). ``final`` states end the run and run nothing.

    ``agent`` (SF_Agent view) gives the state its own instruction and model: the instruction is
    sent to that agent only and never enters the shared history. ``description`` is shown to an
    LLM choosing among states (:func:`~statebound.flow.llm_choice`) and on diagrams.
    """

    __slots__ = ("agent", "description", "final", "name", "outputs", "transitions")

    def __init__(
        self,
        name: str,
        *,
        outputs: Sequence[Output] = (),
        transitions: Sequence[Transition] = (),
        final: bool = False,
        agent: Agent | None = None,
        description: str = "",
    ) -> None:
        if not isinstance(name, str) or not name:
            raise DefinitionError(f"a state needs a non-empty string name, got {name!r}")
        self.name = name
        self.outputs = tuple(outputs)
        self.transitions = tuple(transitions)
        self.final = final
        self.agent = agent
        self.description = description

    def __repr__(self) -> str:
        return f"State({self.name!r}{', final=True' if self.final else ''})"


def compile_transition(state: str, item: object) -> Decider:
    """Turn one ``transitions`` item into its :class:`~statebound.flow.rules.Decider` (a
    ``(rule, "Target")`` pair into a :class:`~statebound.flow.rules.RuleEdge`), or explain how to
    write it."""
    if isinstance(item, Decider):
        return item
    if isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], str) and callable(item[0]):
        return RuleEdge(as_rule(cast(Rule | Test, item[0])), item[1])
    raise DefinitionError(
        f"state {state!r}: transition {item!r} is not understood; write (rule, 'Target') "
        "such as (contains('Error'), 'Error'), or a decider such as llm_choice([...], fallback=...)"
    )
