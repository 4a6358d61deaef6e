"""Traces from a flow run (``trace_of_flow``), and per-state figures read from stored traces."""

from __future__ import annotations

from harness_doubles import entry

from statebound.contract.converters import trace_of_flow
from statebound.exits import ExitReason
from statebound.flow import CallLLM, CallTool, Flow, State, ToolResult, always
from statebound.llm.testing import ScriptedLLM
from statebound.report.figures import state_figures


def _tool(ctx) -> ToolResult:
    return ToolResult("Observation: 3", ok=False, data={"action": "execute[ls]", "outcome": "error", "x": 1})


def test_a_flow_run_keeps_usage_exit_and_named_tool_data():
    flow = Flow(name="f", initial="Act", states=[
        State("Act", outputs=[CallLLM(), CallTool(_tool, name="env")], transitions=[(always(), "End")]),
        State("End", final=True),
    ])  # fmt: skip
    run = flow.run_sync("count the files", llm=ScriptedLLM(["Action: execute[ls]"]))
    trace = trace_of_flow(run, data_keys=("action", "outcome", "missing"))
    assert trace.usage == run.usage and trace.usage.calls == 1
    assert (trace.exit_state, trace.exit, trace.error) == ("End", ExitReason.FINAL, None)
    stored = trace.to_dicts()
    assert [(e["state"], e["source"]) for e in stored] == [("Act", "task"), ("Act", "llm"), ("Act", "tool")]
    tool = stored[-1]
    assert tool["ok"] is False and tool["action"] == "execute[ls]" and tool["outcome"] == "error"
    assert "x" not in tool and "missing" not in tool
    assert state_figures(stored).completion_tokens == {"Act": 2}
    assert list(trace.events) == [event.to_dict() for event in run.events] and trace.events


def test_a_failed_flow_reports_its_error():
    def boom(ctx) -> ToolResult:
        raise RuntimeError("disk on fire")

    flow = Flow(name="f", initial="Act", states=[
        State("Act", outputs=[CallTool(boom)], transitions=[(always(), "End")]), State("End", final=True)])
    trace = trace_of_flow(flow.run_sync("t"))
    assert trace.exit is ExitReason.ERROR and trace.error == "RuntimeError: disk on fire"


def test_visits_count_self_transitions_from_the_events() -> None:
    trajectory = [entry("Solve", "assistant", "a"), entry("Solve", "assistant", "b"), entry("End", "user", "c")]
    events = [
        {"kind": "state_entered", "state": "Solve", "visit": 1},
        {"kind": "transition_taken", "source": "Solve", "target": "Solve"},
        {"kind": "state_entered", "state": "Solve", "visit": 2},
        {"kind": "state_entered", "state": "End", "visit": 1},
    ]
    assert state_figures(trajectory).visits == {"Solve": 1, "End": 1}  # entries alone merge the loop
    assert state_figures(trajectory, events).visits == {"Solve": 2, "End": 1}
