"""The build-time check that asks each output function what is wrong with it where it stands
(:meth:`Output.problems_in <statebound.flow.outputs.base.Output.problems_in>`: a sub-machine whose
variables do not fit the projection, a reducer of the wrong type...)."""

from __future__ import annotations

from collections.abc import Iterable

from statebound.errors import DefinitionError
from statebound.flow.outputs.base import Output
from statebound.flow.states import State
from statebound.flow.variables import VarsSpec

__all__ = ["check_outputs"]


def check_outputs(name: str, states: Iterable[State], vars: VarsSpec | None) -> None:  # noqa: A002
    """Raise one :class:`DefinitionError` listing what every output of flow ``name`` says is wrong."""
    problems = [problem for state in states for output in state.outputs if isinstance(output, Output)
                for problem in output.problems_in(state.name, vars)]
    if problems:
        raise DefinitionError(f"flow {name!r} is not valid:\n" + "\n".join(f"- {p}" for p in problems))
