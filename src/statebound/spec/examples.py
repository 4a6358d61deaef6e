"""Check finished text against a spec: few-shot examples in a prompt, or a whole transcript.

Each deviation names the line and column, what was found and which markers were expected.
"""

from __future__ import annotations

from dataclasses import dataclass

from statebound.spec.automaton import Automaton
from statebound.spec.markers import MarkerIndex
from statebound.spec.model import Spec

__all__ = ["Deviation", "check_run", "transcript_conforms", "validate_examples"]


@dataclass(frozen=True, slots=True)
class Deviation:
    """Where text leaves the spec. ``found`` is a state name, or None for plain text / the end."""

    example: int  # 1-based example number (1 for a lone transcript)
    line: int
    column: int
    found: str | None
    expected: tuple[str, ...]  # marker texts allowed there
    message: str

    def __str__(self) -> str:
        return f"example {self.example}, line {self.line}, column {self.column}: {self.message}"


def _line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def check_run(spec: Spec, text: str, *, automaton: Automaton | None = None, base: int = 0,
              full_text: str | None = None, example: int = 1, complete: bool = True) -> list[Deviation]:
    """Deviations of one run ``text`` (``complete=False``: a valid prefix is enough).

    ``base``/``full_text`` place ``text`` inside a larger document for line and column numbers.
    """
    automaton = automaton or spec.compile()
    index = MarkerIndex(spec.markers)
    document = full_text if full_text is not None else text
    node: int = automaton.start
    state: str | None = None
    deviations: list[Deviation] = []

    def expected(n: int) -> tuple[str, ...]:
        return tuple(sorted(spec.marker(s) for s in automaton.next_states(n)))

    def report(offset: int, found: str | None, message: str, n: int) -> None:
        line, column = _line_col(document, base + offset)
        deviations.append(Deviation(example, line, column, found, expected(n), message))

    hits = list(index.find(text))
    for i, hit in enumerate(hits):
        if automaton.is_terminal(node):
            report(hit.start, hit.state, f"{spec.marker(hit.state)} after the final state {state}", node)
            return deviations
        if hit.state not in automaton.next_states(node):
            want = " or ".join(expected(node)) or "nothing"
            report(hit.start, hit.state, f"found {spec.marker(hit.state)}, expected {want}", node)
            return deviations
        node, state = automaton.edges[node][hit.state], hit.state
        if automaton.is_terminal(node):
            end = hits[i + 1].start if i + 1 < len(hits) else len(text)
            lines = [ln for ln in text[hit.end : end].split("\n") if ln.strip()]
            if len(lines) > 1:
                extra = text.index(lines[1], hit.end)
                report(extra, None, f"text after the final state {state}'s line", node)
                return deviations
    if complete and node not in automaton.accepting:
        want = " or ".join(expected(node))
        report(len(text), None, f"the run stops in state {state}; expected {want}", node)
    return deviations


def transcript_conforms(spec: Spec, text: str, *, automaton: Automaton | None = None) -> bool:
    """True when ``text`` is exactly one complete run: blank before the first marker, no deviations."""
    index = MarkerIndex(spec.markers)
    first = next(index.find(text), None)
    if first is None or text[: first.start].strip():
        return False
    return not check_run(spec, text[first.start :], automaton=automaton)


def validate_examples(spec: Spec, prompt: str, *, last_may_be_open: bool = True,
                      loop_bounds: bool = False) -> list[Deviation]:
    """Check every few-shot example in ``prompt``; examples start at the initial state's marker.

    Text before the first example (instructions) is ignored. The last example may stop early
    (the prompt usually ends with the question to answer) when ``last_may_be_open``. Loop counts
    (``until_5``) are not held against examples unless ``loop_bounds``, as the authors' monitor
    validates them (their HotpotQA examples loop more often than their specs let a run).
    """
    if not loop_bounds:
        spec = spec.without_loop_bounds()
    automaton = spec.compile()
    firsts = automaton.next_states(automaton.start)
    index = MarkerIndex(spec.markers)
    starts = [hit.start for hit in index.find(prompt) if hit.state in firsts]
    deviations: list[Deviation] = []
    for number, (begin, end) in enumerate(zip(starts, [*starts[1:], len(prompt)]), start=1):
        is_last = number == len(starts)
        deviations += check_run(
            spec, prompt[begin:end], automaton=automaton, base=begin, full_text=prompt,
            example=number, complete=not (is_last and last_may_be_open),
        )
    return deviations
