"""UsageTally: a run's usage added up from its calls, each call once, however often it is read."""

from __future__ import annotations

from statebound.flow.result import CallRecord
from statebound.flow.tally import UsageTally
from statebound.llm.base import Usage


def call(state: str, prompt: int, completion: int, cached: int = 0) -> CallRecord:
    return CallRecord(state, "llm", "m", Usage(prompt, completion, 1, cached))


def test_sums_each_call_once_in_total_and_by_state_as_calls_come_in() -> None:
    calls, tally = [call("A", 10, 2)], UsageTally()
    assert tally.total(calls) == Usage(10, 2, 1)
    calls += [call("B", 5, 1, cached=4), call("A", 7, 3)]
    assert tally.total(calls) == tally.total(calls) == Usage(22, 6, 3, 4)
    assert tally.by_state(calls) == {"A": Usage(17, 5, 2), "B": Usage(5, 1, 1, 4)}
    assert list(tally.by_state(calls)) == ["A", "B"]  # in the order the states first called
