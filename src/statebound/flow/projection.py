"""How a sub-machine's variables relate to its parent's: ``vars_in`` (child field <- parent
field, or ``fn(ctx) -> {child field: value}``) gives the child its starting values, ``vars_out``
(parent field <- child field) brings its results back. Checked when the parent flow is built:
each field named must exist, and each value's declared type must fit the field it goes into.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from statebound.flow.context import RunContext
from statebound.flow.var_types import fits, type_name
from statebound.flow.variables import VarsSpec

__all__ = ["Projection", "VarsIn"]

VarsIn = Mapping[str, str] | Callable[[RunContext[Any, Any]], Mapping[str, Any]]


@dataclass(frozen=True, slots=True)
class Projection:
    """The parent's variables as the child sees them, and back (module docstring)."""

    vars_in: VarsIn
    vars_out: Mapping[str, str]

    @property
    def reads(self) -> tuple[str, ...]:
        """The parent's fields it reads (those ``vars_in`` names)."""
        return () if callable(self.vars_in) else tuple(dict.fromkeys(self.vars_in.values()))

    def start(self, ctx: RunContext[Any, Any]) -> dict[str, Any]:
        """The child's starting fields, from the parent's variables now."""
        if callable(self.vars_in):
            return dict(self.vars_in(ctx))
        return {child: getattr(ctx.vars, parent) for child, parent in self.vars_in.items()}

    def results(self, child_vars: Any) -> dict[str, Any]:
        """The parent's fields the child's variables give back."""
        return {parent: getattr(child_vars, child) for parent, child in self.vars_out.items()}

    def problems(self, where: str, parent: VarsSpec | None, child: VarsSpec | None, *,
                 reduced: Collection[str] = ()) -> list[str]:
        """What does not fit (``where`` names the state and output, for messages); the parent's
        fields in ``reduced`` take the child's values through a reducer, which checks their types."""
        named = bool(self.vars_out) or callable(self.vars_in) or bool(self.vars_in)
        if not named:
            return []
        if child is None or parent is None:
            whose = "the sub-machine" if child is None else "the flow"
            return [f"{where} projects variables, but {whose} declares none: give it Flow(vars=...)"]
        pairs: list[tuple[str, str, str, VarsSpec, VarsSpec, bool]] = [
            ("vars_out", parent_field, child_field, child, parent, parent_field not in reduced)
            for parent_field, child_field in self.vars_out.items()]
        if not callable(self.vars_in):
            pairs += [("vars_in", child_field, parent_field, parent, child, True)
                      for child_field, parent_field in self.vars_in.items()]
        return [problem for pair in pairs if (problem := _misfit(where, *pair)) is not None]


def _misfit(where: str, side: str, into: str, source: str, source_spec: VarsSpec, into_spec: VarsSpec,
            typed: bool) -> str | None:
    """Why ``source_spec``'s field ``source`` cannot go into ``into_spec``'s field ``into`` (``typed``:
    compare their types too)."""
    for field, spec in ((source, source_spec), (into, into_spec)):
        if field not in spec.fields:
            return (f"{where} {side} names field {field!r}, which {spec.kind.__name__} has no field for "
                    f"(fields: {', '.join(spec.fields)})")
    given, taken = source_spec.fields[source], into_spec.fields[into]
    if typed and not fits(given, taken):
        return (f"{where} {side}: field {into!r} ({type_name(taken)}) of {into_spec.kind.__name__} cannot take "
                f"field {source!r} ({type_name(given)}) of {source_spec.kind.__name__}")
    return None
