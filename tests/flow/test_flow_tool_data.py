"""A tool's data that would not come back from the store as it went in is refused, naming the tool
and the place in the data (issue #38: NaN and infinity came back as None after a resume; integers
beyond 64 bits and deep nesting ended the run with a raw TypeError or RecursionError)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from statebound.errors import CheckpointError, DefinitionError
from statebound.flow import CallLLM, CallTool, ExitReason, Flow, State, ToolResult, always
from statebound.flow.history import Entry
from statebound.flow.json_data import MAX_DEPTH, json_problem
from statebound.flow.live import SQLiteCheckpointer
from statebound.flow.live.codec import encode_entry
from statebound.llm.base import Capabilities, Choice, ToolCall
from statebound.llm.testing import ScriptedLLM


def _nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


BAD = {
    "NaN": ({"rows": [1.0, 2.0, 3.0, float("nan")]}, "data['rows'][3]: nan does not round-trip"),
    "infinity": ({"mean": float("-inf")}, "data['mean']: -inf does not round-trip"),
    "65-bit integer": ({"id": 2**64}, "data['id']: an integer of 65 bits does not round-trip"),
    "deep nesting": (_nested(MAX_DEPTH + 50), f"nesting deeper than {MAX_DEPTH} levels"),
}


def test_what_round_trips_passes() -> None:
    assert json_problem({"a": [1, 2.5, "x", None, True, 2**64 - 1, -(2**63)], "b": _nested(MAX_DEPTH - 1)}) is None
    assert json_problem({"a": {1, 2}}) == "data['a'] is a set"
    assert json_problem({"a": {1, 2}, 3: "x"}, other_types=True) is None  # kept in memory only


@pytest.mark.parametrize("name", BAD)
def test_the_problem_is_named_with_its_path(name: str) -> None:
    data, expected = BAD[name]
    problem = json_problem(data)
    assert problem is not None and expected in problem and len(problem) < 200


def _flow(data: Any) -> Flow:
    return Flow(name="tooldata", initial="Act", states=[
        State("Act", outputs=[CallTool(lambda ctx: ToolResult("done", data=data), name="stats")],
              transitions=[(always(), "End")]),
        State("End", final=True)])


@pytest.mark.parametrize("name", BAD)
def test_a_tool_returning_such_data_ends_the_run_with_a_clear_error(name: str) -> None:
    data, expected = BAD[name]
    result = _flow(data).run_sync("t", llm=ScriptedLLM([]))
    assert result.exit_reason is ExitReason.ERROR
    assert isinstance(result.error, DefinitionError)
    assert str(result.error).startswith("tool 'stats' in state 'Act' returned data that cannot be stored: ")
    assert expected in str(result.error)


@pytest.mark.parametrize("name", BAD)
def test_with_a_checkpointer_the_error_is_the_same(name: str, tmp_path: Path) -> None:
    data, expected = BAD[name]
    store = SQLiteCheckpointer(tmp_path / "live.db")
    try:
        result = _flow(data).run_sync("t", llm=ScriptedLLM([]), checkpointer=store, thread="t")
    finally:
        store.close()
    assert result.exit_reason is ExitReason.ERROR and expected in str(result.error)


def test_a_function_the_model_calls_is_checked_too() -> None:
    def stats(values: list[int]) -> ToolResult:
        """Stats."""
        return ToolResult("ok", data={"mean": float("nan")})

    llm = ScriptedLLM([Choice(text="", tool_calls=(ToolCall("c1", "stats", '{"values": [1]}'),))],
                      capabilities=Capabilities(chat=True, tools=True))
    flow = Flow(name="calls", initial="Act", states=[
        State("Act", outputs=[CallLLM(tools=[stats])], transitions=[(always(), "End")]),
        State("End", final=True)])
    result = flow.run_sync("t", llm=llm)
    assert result.exit_reason is ExitReason.ERROR
    assert "tool 'stats'" in str(result.error) and "data['data']['mean']: nan" in str(result.error)


def test_the_checkpoint_codec_names_the_place_for_other_entries() -> None:
    entry = Entry("user", "hi", "Ask", "human", data={"x": [float("inf")]})
    with pytest.raises(CheckpointError, match=r"data\['x'\]\[0\]: inf does not round-trip"):
        encode_entry(entry, "Ask")
