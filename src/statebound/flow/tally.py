"""The usage of a run's LLM calls added up, in total and by state.

A run records each call (:class:`~statebound.flow.result.CallRecord`) and reads the sums far less
often than it calls a model, so :class:`UsageTally` adds the calls up when asked, each call once,
in plain integers (a :class:`~statebound.llm.base.Usage` is built only for the answer).
"""

from __future__ import annotations

from collections.abc import Sequence

from statebound.flow.result import CallRecord
from statebound.llm.base import Usage

__all__ = ["UsageTally"]

Counts = list[int]  # prompt, completion and cached tokens, calls: a Usage's fields


class UsageTally:
    """The sums of a growing list of calls (calls are only ever appended to it)."""

    __slots__ = ("_by_state", "_counted", "_total")

    def __init__(self) -> None:
        self._counted = 0
        self._total: Counts = [0, 0, 0, 0]
        self._by_state: dict[str, Counts] = {}

    def total(self, calls: Sequence[CallRecord]) -> Usage:
        """The usage of all ``calls``."""
        self._count(calls)
        return _usage(self._total)

    def by_state(self, calls: Sequence[CallRecord]) -> dict[str, Usage]:
        """The usage of ``calls`` by the state that made them (in the order the states first called)."""
        self._count(calls)
        return {state: _usage(counts) for state, counts in self._by_state.items()}

    def _count(self, calls: Sequence[CallRecord]) -> None:
        total, by_state = self._total, self._by_state
        for i in range(self._counted, len(calls)):
            call = calls[i]
            counts = by_state.get(call.state)
            if counts is None:
                counts = by_state[call.state] = [0, 0, 0, 0]
            _add(total, call.usage)
            _add(counts, call.usage)
        self._counted = len(calls)


def _add(counts: Counts, usage: Usage) -> None:
    counts[0] += usage.prompt_tokens
    counts[1] += usage.completion_tokens
    counts[2] += usage.cached_tokens
    counts[3] += usage.calls


def _usage(counts: Counts) -> Usage:
    prompt, completion, cached, calls = counts
    return Usage(prompt, completion, calls, cached)
