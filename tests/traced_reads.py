"""The flow variables a machine's rules really read, traced while it runs: a check that their
declared ``reads=`` (what ``flow draw --vars`` and ``flow check`` show) leave none out."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pytest

from statebound.flow.rules import NO_DECISION, Decision, FirstDue, Rule, RuleEdge


class _Watched:
    """The flow variables as a rule sees them, noting each field it reads."""

    __slots__ = ("_of", "_seen")

    def __init__(self, of: Any, seen: set[str]) -> None:
        object.__setattr__(self, "_of", of)
        object.__setattr__(self, "_seen", seen)

    def __getattr__(self, name: str) -> Any:
        self._seen.add(name)
        return getattr(self._of, name)


class ReadsTrace:
    """Every rule tested while it is on (:func:`tracing_reads`): the fields each read, and the
    fields it declares (``Rule.reads``), by label."""

    def __init__(self) -> None:
        self.read: dict[str, set[str]] = defaultdict(set)
        self.declared: dict[str, set[str]] = defaultdict(set)

    def test(self, rule: Rule, ctx: Any) -> bool:
        self.declared[rule.label] |= set(rule.reads)
        stored = ctx.vars
        ctx.vars = _Watched(stored, self.read[rule.label])
        try:
            return bool(rule.test(ctx))
        finally:
            ctx.vars = stored

    def undeclared(self) -> dict[str, list[str]]:
        """The fields each rule read and did not declare (empty when none)."""
        return {label: sorted(fields - self.declared[label]) for label, fields in self.read.items()
                if fields - self.declared[label]}


def tracing_reads(monkeypatch: pytest.MonkeyPatch) -> ReadsTrace:
    """Trace the reads of every rule a run tests from now on (single rules and pipelines' parts)."""
    trace = ReadsTrace()

    def rule_edge(edge: RuleEdge, ctx: Any) -> Decision:
        return edge._fired if trace.test(edge.rule, ctx) else NO_DECISION

    def pipeline(group: FirstDue, ctx: Any) -> Decision:
        return next((decision for rule, decision in group._due if trace.test(rule, ctx)), group._none)

    monkeypatch.setattr(RuleEdge, "decide_now", rule_edge)
    monkeypatch.setattr(FirstDue, "decide_now", pipeline)
    return trace
