"""The compiled state machine: states, compiled transitions and limits, validated when built and
immutable afterwards. Pure data: running it is :mod:`statebound.flow.engine`'s job, and the
user-facing :class:`~statebound.flow.model.Flow` adds ``run``/``resume``/drawing on top.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any, Self

from statebound.errors import DefinitionError
from statebound.flow.output_checks import check_outputs
from statebound.flow.rules import Decider
from statebound.flow.states import State, compile_transition
from statebound.flow.validate import validate
from statebound.flow.variables import VarsSpec

__all__ = ["Machine"]


class Machine:
    """A validated StateFlow model. Configuration is keyword-only; see ``docs/flow.md``.

    ``max_turns`` bounds the number of transitions; ``visit_limits`` bounds how often a state may
    be entered; ``token_budget`` bounds the run's total LLM tokens. ``system`` is the system
    prompt of every LLM call. ``vars`` declares the run's typed variables (a frozen dataclass or a
    pydantic model, the class or an initial instance; :mod:`statebound.flow.variables`); ``deps``
    the type of what the tools get as ``ctx.deps``.
    """

    __slots__ = ("deps", "edges", "initial", "max_turns", "name", "origin", "states", "states_by_name", "system",
                 "token_budget", "vars", "visit_limits")

    def __init__(
        self,
        *,
        name: str,
        initial: str,
        states: Iterable[State],
        system: str | None = None,
        max_turns: int = 20,
        token_budget: int | None = None,
        visit_limits: Mapping[str, int] | None = None,
        vars: Any = None,  # noqa: A002 - the name users write
        deps: type | None = None,
    ) -> None:
        self.name = name
        if deps is not None and not isinstance(deps, type):
            raise DefinitionError(f"Flow(deps=...) takes the type of what the tools get as ctx.deps, not {deps!r}")
        self.deps = deps
        self.vars: VarsSpec | None = None if vars is None else VarsSpec(vars)
        self.initial = initial
        self.states = tuple(states)
        self.system = system
        self.max_turns = max_turns
        self.token_budget = token_budget
        self.visit_limits: Mapping[str, int] = MappingProxyType(dict(visit_limits or {}))
        self.states_by_name: Mapping[str, State] = MappingProxyType({s.name: s for s in self.states})
        self.edges: Mapping[str, tuple[Decider, ...]] = MappingProxyType(
            {s.name: tuple(compile_transition(s.name, t) for t in s.transitions) for s in self.states}
        )
        validate(self)
        if self.vars is not None:
            self.vars.check_writers(self.states)
        check_outputs(name, self.states, self.vars)
        # where the flow was loaded from, when known (``statebound run`` sets it: a bundled flow's
        # name or ``/abs/path.py:variable``); kept with its threads, so hints can name it
        self.origin: str | None = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, states={[s.name for s in self.states]})"

    @property
    def final_states(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.states if s.final)

    def replace(self, **changes: Any) -> Self:
        """A copy with some settings changed, e.g. ``flow.replace(max_turns=5)`` (validated again)."""
        settings = {
            "name": self.name,
            "initial": self.initial,
            "states": self.states,
            "system": self.system,
            "max_turns": self.max_turns,
            "token_budget": self.token_budget,
            "visit_limits": self.visit_limits,
            "vars": None if self.vars is None else self.vars.initial,
            "deps": self.deps,
        }
        unknown = set(changes) - set(settings)
        if unknown:
            raise DefinitionError(f"Flow.replace: unknown settings {sorted(unknown)}; use {sorted(settings)}")
        copy = type(self)(**{**settings, **changes})
        copy.origin = self.origin
        return copy
