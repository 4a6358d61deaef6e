"""A key that a server echoes inside a successful reply is masked before it is stored or printed,
as error bodies are (issue #51): over a real HTTP server, with the key from the environment."""

from __future__ import annotations

from pathlib import Path

import pytest
from llm_fault_server import Reply, completion_body
from typer.testing import CliRunner

from statebound.cli.app import app

KEY = "sk-Zt4rQ9mW2xV7bN1cK8pL5hJ3"


def _leaks(text: str) -> list[str]:
    """The 8-character pieces of the key (past its vendor prefix) that ``text`` holds."""
    secret = KEY[3:]
    return [secret[i:i + 8] for i in range(len(secret) - 7) if secret[i:i + 8] in text]


def test_a_key_echoed_in_a_successful_reply_is_stored_and_printed_masked(
        fault_server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    server, base_url = fault_server
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    server.play(*[Reply(body=completion_body(f"Answer: 7, and you sent me {KEY[3:]}"))] * 2)
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["eval", "toy", "-a", "direct", "-m", "openai:test-model", "-O", "count=2", "-j", "1",
                                      "--model-option", f"base_url={base_url}", "--no-progress", "--no-plots",
                                      "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert len(server.bodies) == 2  # both replies arrived
    stored = [p for p in out.rglob("*") if p.is_file() and _leaks(p.read_bytes().decode("utf-8", "replace"))]
    assert stored == [] and _leaks(result.output) == []
    shown = CliRunner().invoke(app, ["show", str(out), "--task", "toy-000"])
    assert "you sent me ***" in shown.output and _leaks(shown.output) == []

    server.play(Reply(body=completion_body(f"my key is {KEY}")))
    flow = tmp_path / "flow.py"
    flow.write_text("from statebound.flow import CallLLM, Flow, State, always\n"
                    "flow = Flow(name='f', initial='A', states=[State('A', outputs=[CallLLM()], "
                    "transitions=[(always(), 'E')]), State('E', final=True)])\n")
    printed = CliRunner().invoke(app, ["run", f"{flow}:flow", "--task", "t", "-m", "openai:test-model",
                                       "--model-option", f"base_url={base_url}"])
    assert printed.exit_code == 0, printed.output
    assert "my key is sk-***" in printed.output and _leaks(printed.output) == []
