"""``statebound run`` and ``statebound flow draw`` (with the scripted model)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from statebound.cli.app import app

runner = CliRunner()


def _flat(output: str) -> str:
    """The output with rich's box borders and line wrapping removed."""
    return " ".join(output.replace("│", " ").split())

USER_FLOW = '''
from statebound.flow import CallLLM, Flow, State, always

flow = Flow(name="mine", initial="Ask", states=[
    State("Ask", outputs=[CallLLM()], transitions=[(always(), "End")]),
    State("End", final=True),
])
'''


def test_run_user_flow_prints_trajectory_and_writes_trace(tmp_path):
    path = tmp_path / "my_flows.py"
    path.write_text(USER_FLOW)
    trace = tmp_path / "out.jsonl"
    result = runner.invoke(app, ["run", f"{path}:flow", "--task", "say hi", "--model", "scripted", "--trace", str(trace)])
    # the scripted model has no replies, so the run ends with an error that is reported
    assert result.exit_code == 1
    assert "Ask (turn 0, visit 1)" in result.output
    assert "ScriptedLLM ran out of replies" in result.output
    records = [json.loads(line) for line in trace.read_text().splitlines()]
    assert records[0]["kind"] == "message_added" and records[-1]["kind"] == "run_finished"


def test_run_rejects_bad_flow_references(tmp_path):
    result = runner.invoke(app, ["run", "nothing-here", "--task", "x", "--model", "scripted"])
    assert result.exit_code != 0 and "path.py:variable" in _flat(result.output)
    path = tmp_path / "f.py"
    path.write_text(USER_FLOW)
    result = runner.invoke(app, ["run", f"{path}:other", "--task", "x", "--model", "scripted"])
    assert result.exit_code != 0 and "no variable 'other'" in _flat(result.output)
    builder = tmp_path / "builder.py"
    builder.write_text(USER_FLOW + "\n\ndef build(size):\n    return flow\n")
    result = runner.invoke(app, ["flow", "draw", f"{builder}:build"])
    assert result.exit_code == 2 and "cannot be called without arguments" in _flat(result.output)
    assert "Traceback" not in result.output


def test_user_flow_needs_a_task(tmp_path):
    path = tmp_path / "f.py"
    path.write_text(USER_FLOW)
    result = runner.invoke(app, ["run", f"{path}:flow", "--model", "scripted"])
    assert result.exit_code != 0 and "--task" in _flat(result.output)


def test_flow_draw_writes_mermaid_and_dot(tmp_path):
    result = runner.invoke(app, ["flow", "draw", "arithmetic", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "arithmetic.mmd").read_text().startswith("stateDiagram-v2")
    assert "Calculate" in (tmp_path / "arithmetic.dot").read_text()
