"""Static checks of a spec (``statebound spec check FILE``): errors, warnings and notes, with positions.

An unbounded loop (``until`` without a bound, ``always``) is a note, not a warning: an agent's
loop runs until its exit state, and the run's own limit (a turn limit, the monitor's
``max_calls``) bounds it; ``--strict`` fails on warnings, not on notes."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from statebound.spec.model import Always, Formula, Next, Or, Spec, StateRef, Until

__all__ = ["Diagnostic", "check_spec"]

# Words so common in prose that a marker made of them alone would be found in ordinary text.
_COMMON = re.compile(r"^[A-Za-z][A-Za-z ]*:?$")


@dataclass(frozen=True, slots=True)
class Diagnostic:
    severity: Literal["error", "warning", "info"]
    code: str
    message: str
    line: int
    column: int

    def format(self, source_name: str) -> str:
        return f"{source_name}:{self.line}:{self.column}: {self.severity}: {self.message} [{self.code}]"


def _walk(formula: Formula) -> Iterator[Formula]:
    yield formula
    match formula:
        case Next(parts=parts) | Or(parts=parts):
            for part in parts:
                yield from _walk(part)
        case Until(body=body, end=end):
            yield from _walk(body)
            yield from _walk(end)
        case Always(body=body):
            yield from _walk(body)


def check_spec(spec: Spec) -> list[Diagnostic]:
    """Every problem found, errors first, each with the line and column it concerns."""
    automaton = spec.compile()
    found: list[Diagnostic] = []
    used = automaton.used_states
    mentioned = {f.name for f in _walk(spec.behavior) if isinstance(f, StateRef)}
    for state in spec.states:
        if state.name not in mentioned:
            found.append(Diagnostic("warning", "unused-state", f"state {state.name!r} never appears in "
                                    ":behavior, so it can never be reached", state.line, state.column))
        elif state.name not in used:
            found.append(Diagnostic("error", "unreachable-state", f"state {state.name!r} appears in "
                                    ":behavior but no run can reach it (check the bounds of until_N)",
                                    state.line, state.column))
    if not automaton.accepting:
        found.append(Diagnostic("error", "never-completes", "no run of :behavior can ever complete",
                                spec.behavior.line, spec.behavior.column))
    if automaton.start in automaton.accepting:
        found.append(Diagnostic("warning", "empty-run", "the behavior accepts an empty run: a run "
                                "with no states at all counts as complete", spec.behavior.line,
                                spec.behavior.column))
    env_first = automaton.next_states(automaton.start) & {s.name for s in spec.env_states}
    for name in sorted(env_first):
        state = spec.by_name[name]
        found.append(Diagnostic("warning", "env-first", f"the run may start with :env-input state "
                                f"{name!r}; the task text fills the first state", state.line, state.column))
    found += _marker_checks(spec)
    for node in _walk(spec.behavior):
        if isinstance(node, Always) or (isinstance(node, Until) and node.high is None):
            op = "always" if isinstance(node, Always) else "until"
            found.append(Diagnostic("info", "unbounded-loop", f"unbounded loop '({op} ...)': only the run's "
                                    "limit (turns, monitor calls) ends it; bound it with until_N if that matters",
                                    node.line, node.column))
    rank = {"error": 0, "warning": 1, "info": 2}
    return sorted(found, key=lambda d: (rank[d.severity], d.line, d.column))


def _distinctive(marker: str, state: str) -> str:
    """A bracketed form of ``marker`` (``Thought:`` -> ``[Thought]``, ``[A`` -> ``[A]``), from the
    state's name when the marker holds no word."""
    core = marker.strip().strip("[]:").strip() or state
    return f"[{core}]"


def _marker_checks(spec: Spec) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    for a in spec.states:
        for b in spec.states:
            if a.name < b.name and a.text == b.text:
                found.append(Diagnostic("error", "marker-duplicate", f"states {a.name!r} and {b.name!r} "
                                        f"share the marker {a.text!r}", b.line, b.column))
            elif a.name != b.name and a.text != b.text and b.text.startswith(a.text):
                found.append(Diagnostic("error", "marker-prefix", f"marker {a.text!r} of {a.name!r} is "
                                        f"a prefix of {b.text!r} of {b.name!r}; text cannot be split "
                                        "unambiguously while it streams", a.line, a.column))
        text = a.text.strip()
        if text != a.text:
            found.append(Diagnostic("warning", "marker-whitespace", f"marker {a.text!r} of {a.name!r} "
                                    "starts or ends with whitespace, which models often alter",
                                    a.line, a.column))
        if len(text) < 3 or _COMMON.match(text):
            found.append(Diagnostic("warning", "marker-collision", f"marker {a.text!r} of {a.name!r} "
                                    "could occur in ordinary text; use a distinctive form such as "
                                    f"{_distinctive(text, a.name)!r}", a.line, a.column))
    return found
