"""States and their compiled transitions: the parts a :class:`~statebound.flow.machine.Machine`
is built from."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from statebound.errors import DefinitionError
from statebound.flow.agent import Agent
from statebound.flow.context import RunContext
from statebound.flow.outputs import Output
from statebound.flow.rules import Decider, Rule, as_rule

__all__ = ["Edge", "State", "Transition", "compile_transition"]

Transition = tuple[Rule | Callable[[RunContext], bool], str] | Decider


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


class Edge:
    """A compiled transition: a ``rule`` with a fixed ``target``, or a ``decider`` naming it."""

    __slots__ = ("decider", "label", "rule", "target", "test")

    def __init__(self, test: Callable[[RunContext], bool] | None, target: str | None, label: str,
                 decider: Decider | None, rule: Rule | None = None) -> None:
        self.test = test
        self.target = target
        self.label = label
        self.decider = decider
        self.rule = rule

    @property
    def targets(self) -> tuple[str, ...]:
        return self.decider.targets if self.decider is not None else (self.target,)  # type: ignore[return-value]

    @property
    def catch_all(self) -> bool:
        """Whether this transition always fires (it then ends the list: later ones never fire)."""
        return bool(getattr(self.decider if self.decider is not None else self.rule, "catch_all", False))


def compile_transition(state: str, item: object) -> Edge:
    """Turn one ``transitions`` item into an :class:`Edge`, or explain how to write it."""
    if isinstance(item, Decider) and not isinstance(item, tuple):
        return Edge(None, None, item.label, item)
    if isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], str):
        rule = as_rule(item[0])  # type: ignore[arg-type]
        return Edge(rule.test, item[1], rule.label, None, rule)
    raise DefinitionError(
        f"state {state!r}: transition {item!r} is not understood; write (rule, 'Target') "
        "such as (contains('Error'), 'Error'), or a decider such as llm_choice([...], fallback=...)"
    )
