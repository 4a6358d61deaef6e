"""``statebound eval`` against a misbehaving OpenAI-compatible server: exit status, the one-line
messages, what is stored, that the key is never stored, and that --resume continues once fixed."""

from __future__ import annotations

import json
import socket
import sqlite3
from pathlib import Path

import pytest
from llm_fault_server import OK, FaultServer, status
from typer.testing import CliRunner

from statebound.cli.app import app

KEY = "sk-eval-faults-0123456789SECRET"
ROTATED = "sk-eval-faults-rotated-987654SECRET"
Server = tuple[FaultServer, str]


def evaluate(out: Path, base_url: str, *more: str, key: str = KEY):
    args = ["eval", "toy", "-a", "direct", "-m", "openai:test-model", "-O", "count=4", "-j", "1", "--no-progress",
            "--no-plots", "--out", str(out), "--model-option", f"base_url={base_url}",
            "--model-option", f"api_key={key}", "--model-option", "attempts=1", *more]
    return CliRunner().invoke(app, args)


def stored(out: Path) -> list[tuple[str, str | None]]:
    with sqlite3.connect(out / "run.sqlite") as db:
        return list(db.execute("SELECT task, error FROM episodes ORDER BY position"))


def files_holding(out: Path, secret: str) -> list[str]:
    return [str(path) for path in out.rglob("*") if path.is_file() and secret.encode() in path.read_bytes()]


def test_a_refused_key_stops_the_run_and_a_new_key_resumes_it(fault_server: Server, tmp_path: Path) -> None:
    server, base_url = fault_server
    out = tmp_path / "run"
    server.play(*[status(401)] * 4)
    refused = evaluate(out, base_url)
    assert refused.exit_code == 2
    line = refused.stderr.strip()
    assert "\n" not in line and "Traceback" not in refused.output
    assert "HTTP 401, authentication failed" in line and "The run stopped, 0 of 4 episodes stored" in line
    assert line.endswith(f"continue with statebound eval --out {out} --resume")
    assert len(server.seen) == 1  # one request, not one per episode
    assert stored(out) == [] and files_holding(out, KEY) == []

    server.play(*[OK] * 4)
    resumed = evaluate(out, base_url, "--resume", key=ROTATED)  # a rotated key is not another run
    assert resumed.exit_code == 0, resumed.output
    assert "4 episodes run, 0 already stored, 0 crashed" in resumed.stdout
    assert "resumed with other transport settings: openai:test-model api_key: secret:sha256:" in resumed.stdout
    assert server.seen[0]["authorization"] == f"Bearer {ROTATED}"
    assert files_holding(out, KEY) == [] and files_holding(out, ROTATED) == []
    with sqlite3.connect(out / "run.sqlite") as db:
        history = json.loads(db.execute("SELECT value FROM run WHERE key = 'transport_history'").fetchone()[0])
    assert history[0]["models"][0]["options"]["api_key"].startswith("secret:sha256:")  # the key used before


def test_every_episode_crashing_exits_1_with_the_causes(fault_server: Server, tmp_path: Path) -> None:
    server, base_url = fault_server
    out = tmp_path / "run"
    server.play(*[status(500)] * 4)
    crashed = evaluate(out, base_url)
    assert crashed.exit_code == 1, crashed.output
    assert "4 episodes run, 0 already stored, 4 crashed" in crashed.stdout
    summary = next(line for line in crashed.stdout.splitlines() if "crashed episodes stored" in line)
    assert summary.startswith("4 crashed episodes stored (--resume --retry-errors runs them again): 4 x ProviderError:")
    assert "HTTP 500, server error" in summary
    assert [error is not None for _, error in stored(out)] == [True] * 4

    again = evaluate(out, base_url, "--resume")  # a plain resume runs nothing but says what is stored
    assert again.exit_code == 1
    assert "0 episodes run, 4 already stored, 0 crashed" in again.stdout
    assert "4 crashed episodes stored" in again.stdout

    server.play(*[OK] * 4)
    retried = evaluate(out, base_url, "--resume", "--retry-errors")
    assert retried.exit_code == 0, retried.output
    assert [error for _, error in stored(out)] == [None] * 4
    assert "crashed episodes stored" not in retried.stdout


def test_a_model_without_a_price_has_an_unknown_cost(fault_server: Server, tmp_path: Path) -> None:
    """openai:test-model is in no price table: its episodes' cost is unknown (None), not 0."""
    server, base_url = fault_server
    out = tmp_path / "run"
    server.play(*[OK] * 4)
    result = evaluate(out, base_url)
    assert result.exit_code == 0, result.output
    assert "price unknown for openai:test-model: reports show its cost as unknown" in result.stdout
    with sqlite3.connect(out / "run.sqlite") as db:
        costs = [json.loads(row)["cost_usd"] for (row,) in db.execute("SELECT row FROM episodes")]
    assert costs == [None] * 4
    assert "| direct | openai:test-model | 4 |" in (out / "report.md").read_text()
    assert "| unknown |" in (out / "report.md").read_text()


@pytest.mark.parametrize("benchmark", ["intercode-sql", "intercode-bash"])
def test_format_grammar_without_a_grammar_field_is_refused_before_anything_is_stored(
        fault_server: Server, tmp_path: Path, benchmark: str) -> None:
    """As docs/intercode-sql.md and docs/intercode-bash.md say: one line naming grammar_field, no
    request sent, no run directory made."""
    server, base_url = fault_server
    out = tmp_path / "run"
    result = CliRunner().invoke(app, [
        "eval", benchmark, "-a", "stateflow", "-m", "openai:test-model", "-O", "format=grammar", "--limit", "1",
        "--no-progress", "--no-plots", "--out", str(out), "--model-option", f"base_url={base_url}"])
    assert result.exit_code == 2, result.output
    line = result.stderr.strip()
    assert "\n" not in line and "Traceback" not in result.output
    assert f"{benchmark} agent stateflow needs a model whose backend accepts GBNF grammars" in line
    assert "--model-option grammar_field=grammar" in line and "-O format=free" in line
    assert server.seen == [] and not out.exists()


def test_a_server_that_is_not_running_stops_the_run(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result = evaluate(tmp_path / "run", f"http://127.0.0.1:{port}/v1")
    assert result.exit_code == 2
    assert f"connection refused at 127.0.0.1:{port}: nothing listens there" in result.stderr
    assert "timeout" not in result.stderr


def test_changing_what_the_model_answers_is_refused_without_showing_the_key(fault_server: Server,
                                                                            tmp_path: Path) -> None:
    server, base_url = fault_server
    out = tmp_path / "run"
    server.play(*[OK] * 4)
    assert evaluate(out, base_url).exit_code == 0
    refused = evaluate(out, base_url, "--resume", "--model-option", "completions=false")
    assert refused.exit_code == 2
    assert "the configuration differs (models:" in refused.stderr and "'completions': False" in refused.stderr
    assert KEY not in refused.output and "secret:sha256" not in refused.stderr  # keys are not identity
