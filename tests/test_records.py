"""The records a run builds on every step (requests, chat messages, history entries, LLM call
records, events) are immutable, checked when built and when copied with changes, and equal by
value."""

from __future__ import annotations

import pickle

import msgspec
import pytest

from statebound.flow import Flow, Instruction, State, StateEntered, TransitionTaken, always
from statebound.flow.history import Entry
from statebound.flow.result import CallRecord
from statebound.llm.base import Message, Request, Usage

MESSAGES = (Message("user", "hi"),)


def test_a_request_is_checked_when_built_and_when_copied_with_changes() -> None:
    with pytest.raises(ValueError, match="exactly one of prompt= or messages="):
        Request(prompt="hi", messages=MESSAGES)
    request = Request(messages=MESSAGES, max_tokens=8)
    assert request == Request(messages=MESSAGES, max_tokens=8, stop=())
    assert msgspec.structs.replace(request, max_tokens=4).max_tokens == 4
    with pytest.raises(ValueError, match="max_tokens must be at least 1"):
        msgspec.structs.replace(request, max_tokens=0)
    with pytest.raises(TypeError):
        Request(None, MESSAGES)  # type: ignore[misc]  # keyword-only


@pytest.mark.parametrize("record", [
    Entry("user", "hi", "Start", "task"),
    Message("assistant", "hello"),
    Request(messages=MESSAGES),
    CallRecord("Start", "llm", "scripted", Usage(3, 1, 1), None, 0.01),
    StateEntered("Start", 0, 1),
])
def test_records_cannot_be_changed_and_survive_a_pickle(record: object) -> None:
    first_field = record.__struct_fields__[0]  # type: ignore[attr-defined]
    with pytest.raises(AttributeError, match="immutable"):
        setattr(record, first_field, "changed")
    assert pickle.loads(pickle.dumps(record)) == record and hash(record) == hash(pickle.loads(pickle.dumps(record)))


def test_a_runs_events_and_history_are_records_equal_by_value() -> None:
    flow = Flow(name="two", initial="A", states=[
        State("A", outputs=[Instruction("go")], transitions=[(always(), "B")]), State("B", final=True)])
    first, again = flow.run_sync("task"), flow.run_sync("task")
    assert first.history == again.history and first.events == again.events
    entered = [e for e in first.events if isinstance(e, StateEntered)]
    assert [(e.state, e.visit) for e in entered] == [("A", 1), ("B", 1)]
    taken = next(e for e in first.events if isinstance(e, TransitionTaken))
    assert taken.to_dict() == {"kind": "transition_taken", "source": "A", "target": "B", "turn": 1,
                               "reason": "always", "choice": None}
