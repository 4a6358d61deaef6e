"""The parsed form of a behaviour spec: states with their markers, and the behaviour formula."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from statebound.spec.automaton import Automaton

__all__ = [
    "ENV_INPUT",
    "Always",
    "Formula",
    "Next",
    "Or",
    "Spec",
    "StateDef",
    "StateRef",
    "Until",
]

ENV_INPUT = ":env-input"
KNOWN_FLAGS = frozenset({ENV_INPUT})


@dataclass(frozen=True, slots=True)
class StateRef:
    """Exactly one occurrence of the named state."""

    name: str
    line: int = field(default=0, compare=False)
    column: int = field(default=0, compare=False)


@dataclass(frozen=True, slots=True)
class Next:
    """``(next a b c ...)``: ``a``, then ``b``, then ``c``."""

    parts: tuple[Formula, ...]
    line: int = field(default=0, compare=False)
    column: int = field(default=0, compare=False)


@dataclass(frozen=True, slots=True)
class Or:
    """``(or a b ...)``: any one of the alternatives."""

    parts: tuple[Formula, ...]
    line: int = field(default=0, compare=False)
    column: int = field(default=0, compare=False)


@dataclass(frozen=True, slots=True)
class Until:
    """``(until a b)``: ``a`` repeated between ``low`` and ``high`` times (None: unbounded), then ``b``."""

    body: Formula
    end: Formula
    low: int = 0
    high: int | None = None
    line: int = field(default=0, compare=False)
    column: int = field(default=0, compare=False)

    @property
    def operator(self) -> str:
        if self.high is None:
            return "until"
        return f"until_{self.high}" if self.low == 0 else f"until_{self.low}_{self.high}"


@dataclass(frozen=True, slots=True)
class Always:
    """``(always a)``: ``a`` repeated zero or more times."""

    body: Formula
    line: int = field(default=0, compare=False)
    column: int = field(default=0, compare=False)


Formula = StateRef | Next | Or | Until | Always


def render(formula: Formula) -> str:
    """The formula back in s-expression form."""
    match formula:
        case StateRef(name=name):
            return name
        case Next(parts=parts):
            return "(next " + " ".join(render(p) for p in parts) + ")"
        case Or(parts=parts):
            return "(or " + " ".join(render(p) for p in parts) + ")"
        case Until(body=body, end=end):
            return f"({formula.operator} {render(body)} {render(end)})"
        case Always(body=body):
            return f"(always {render(body)})"
    raise TypeError(f"not a formula: {formula!r}")


def unbounded(formula: Formula) -> Formula:
    """``formula`` with every ``until`` loop count lifted (``until_5`` read as ``until``): how the
    authors' monitor validates few-shot examples (``disable_count_limits``)."""
    match formula:
        case Next(parts=parts) | Or(parts=parts):
            return replace(formula, parts=tuple(unbounded(p) for p in parts))
        case Until(body=body, end=end):
            return replace(formula, body=unbounded(body), end=unbounded(end), low=0, high=None)
        case Always(body=body):
            return replace(formula, body=unbounded(body))
    return formula


@dataclass(frozen=True, slots=True)
class StateDef:
    """One entry of ``:states``: its name, marker text and flags."""

    name: str
    text: str
    flags: frozenset[str] = frozenset()
    line: int = field(default=0, compare=False)
    column: int = field(default=0, compare=False)

    @property
    def env_input(self) -> bool:
        """True when the environment (a tool), not the LLM, writes this state's content."""
        return ENV_INPUT in self.flags


@dataclass(frozen=True)
class Spec:
    """A parsed behaviour spec. ``compile()`` turns it into an :class:`Automaton`."""

    name: str
    states: tuple[StateDef, ...]
    behavior: Formula
    source_name: str = "<spec>"

    @cached_property
    def by_name(self) -> Mapping[str, StateDef]:
        return {s.name: s for s in self.states}

    @cached_property
    def markers(self) -> Mapping[str, str]:
        """Marker text -> state name."""
        return {s.text: s.name for s in self.states}

    @property
    def env_states(self) -> tuple[StateDef, ...]:
        return tuple(s for s in self.states if s.env_input)

    def marker(self, state: str) -> str:
        return self.by_name[state].text

    def without_loop_bounds(self) -> Spec:
        """The same spec with every loop count lifted (see :func:`unbounded`)."""
        return Spec(self.name, self.states, unbounded(self.behavior), self.source_name)

    def compile(self) -> Automaton:
        """The minimal deterministic automaton over state names that this behaviour describes
        (compiled once per spec; the automaton is immutable, so it is shared)."""
        return self._automaton

    @cached_property
    def _automaton(self) -> Automaton:
        from statebound.spec.automaton import compile_formula

        return compile_formula(self.behavior, alphabet=tuple(s.name for s in self.states))

    def to_text(self) -> str:
        """The spec in the paper's s-expression format (parses back to an equal spec)."""
        lines = [f"(define {self.name}", "  (:states"]
        for s in self.states:
            text = s.text.replace("\\", "\\\\").replace('"', '\\"')
            flags = f" (:flags {' '.join(sorted(s.flags))})" if s.flags else ""
            lines.append(f'    ({s.name} (:text "{text}"){flags})')
        lines[-1] += ")"
        lines.append(f"  (:behavior {render(self.behavior)}))")
        return "\n".join(lines) + "\n"
