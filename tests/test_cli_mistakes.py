"""Every subcommand, given a user's mistake, ends with one line on stderr and a non-zero exit
status: never a traceback, never a framed box."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from statebound.cli.app import app

ORACLE = "function:statebound.benchmarks.toy:oracle"
TOY = ["eval", "toy", "-a", "direct", "-m", ORACLE, "--no-progress"]


@pytest.fixture
def place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder with a plain file, a flow file with a syntax error and config files."""
    (tmp_path / "file").write_text("not a directory")
    (tmp_path / "broken.py").write_text("flow = (\n")
    (tmp_path / "bad.toml").write_text("model = \n")
    (tmp_path / "typo.toml").write_text("[opneai]\nbase_url = 'http://127.0.0.1:1/v1'\n")
    (tmp_path / "mcp.json").write_text('{"mcpServers": {"time": {"command": "mcp-server-time"}}}')
    monkeypatch.setenv("STATEBOUND_CONFIG", str(tmp_path / "none.toml"))
    for name in ("STATEBOUND_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


MISTAKES: dict[str, tuple[list[str], str | None, str]] = {
    # id: (arguments, config file or None, words the line must hold)
    "unknown-command": (["evl"], None, "No such command 'evl'"),
    "unknown-root-flag": (["--bogus"], None, "No such option: --bogus"),
    "eval-no-benchmark": (["eval"], None, "give a BENCHMARK"),
    "eval-unknown-benchmark": (["eval", "nosuch", "-a", "x", "-m", ORACLE], None, "nosuch"),
    "eval-unknown-agent": ([*TOY[:3], "nosuch", *TOY[4:], "--out", "r"], None, "nosuch"),
    "eval-unknown-model": ([*TOY[:5], "nosuch", "--out", "r"], None, "unknown model 'nosuch'"),
    "eval-out-is-a-file": ([*TOY, "--out", "file"], None, "is a file"),
    "eval-resume-a-typo": ([*TOY, "--out", "typo", "--resume"], None, "nothing to resume in typo"),
    "eval-unknown-option": ([*TOY, "-O", "cont=3", "--out", "r"], None, "did you mean 'count'"),
    "eval-bad-model-option": ([*TOY, "--model-option", "nokv", "--out", "r"], None, "is not key=value"),
    "eval-unknown-model-option": ([*TOY, "--model-option", "gramar=true", "--out", "r"], None, "did you mean grammar"),
    "eval-bad-seed": ([*TOY, "--seed", "x"], None, "Invalid value for '--seed'"),
    "eval-no-concurrency": ([*TOY, "-j", "0", "--out", "r"], None, "'--concurrency' / '-j': Input should be greater than or equal to 1"),
    "eval-no-openai-key": ([*TOY[:5], "openai:gpt-4o-mini", "--out", "r"], None, "no API key"),
    "eval-bad-config": ([*TOY[:5], "openai:m", "--out", "r"], "bad.toml", "not valid TOML"),
    "eval-config-typo": ([*TOY[:5], "openai:m", "--out", "r"], "typo.toml", "did you mean [openai]"),
    "report-no-run": (["report", "none"], None, "none does not exist"),
    "report-out-is-a-file": (["report", "none", "--out", "file"], None, "is a file"),
    "show-no-run": (["show", "none", "--task", "x"], None, "none does not exist"),
    "show-no-task": (["show", "none"], None, "Missing option '--task'"),
    "status-no-run": (["status", "none"], None, "none does not exist"),
    "models-bad-flag": (["models", "--bogus"], None, "No such option"),
    "models-config-typo": (["models"], "typo.toml", "unknown table [opneai]"),
    "run-unknown-flow": (["run", "nosuch"], None, "neither a bundled example"),
    "run-unknown-model": (["run", "arithmetic", "-m", "nosuch"], None, "unknown model 'nosuch'"),
    "run-bad-config": (["run", "arithmetic"], "bad.toml", "not valid TOML"),
    "run-flow-syntax-error": (["run", "broken.py:flow"], None, "syntax error"),
    "run-resume-without-store": (["run", "arithmetic", "--resume"], None, "--resume needs --store"),
    "run-no-mcp-config": (["run", "arithmetic", "--mcp-config", "none.json"], None, "cannot read the MCP config none.json"),
    "run-bad-mcp-config": (["run", "arithmetic", "--mcp-config", "bad.toml"], None, "bad.toml is not JSON"),
    "mcp-serve-unknown-flow": (["mcp", "serve", "nosuch"], None, "neither a bundled example"),
    "mcp-unknown-flow": (["mcp", "nosuch"], None, "neither a bundled example"),
    "mcp-list-unknown-server": (["mcp", "list", "nosuch", "--mcp-config", "mcp.json"], None,
                                "mcp.json has no server 'nosuch' (it has time)"),
    "mcp-list-no-command": (["mcp", "list", "/no/such/server"], None, "could not be started: no such command"),
    "threads-no-store": (["threads", "none.sqlite"], None, "no store at none.sqlite"),
    "serve-unknown-flow": (["serve", "nosuch"], None, "neither a bundled example"),
    "serve-exposed-without-token": (["serve", "arithmetic", "--host", "0.0.0.0"], None, "give --auth-token"),
    "serve-workers-on-sqlite": (["serve", "arithmetic", "--workers", "2"], None, "needs a postgresql:// store"),
    "view-not-a-run": (["view", "file"], None, "file is neither a run store nor a live-flow store"),
    "clean-bad-flag": (["clean", "--bogus"], None, "No such option"),
    "pack-no-run": (["pack", "nosuch"], None, "nosuch does not exist"),
    "induce-no-run": (["induce", "nosuch", "--benchmark", "toy", "--out", "m.json"], None, "nosuch does not exist"),
    "induce-bad-suffix": (["induce", "nosuch", "--benchmark", "toy", "--out", "m.yaml"], None, "written as .py or .json"),
    "induce-one-fold": (["induce", "nosuch", "--benchmark", "toy", "--folds", "1", "--out", "d"], None,
                        "Invalid value for '--folds'"),
    "flow-check-syntax-error": (["flow", "check", "broken.py:flow"], None, "broken.py:1"),
    "flow-draw-out-is-a-file": (["flow", "draw", "arithmetic", "-o", "file"], None, "is a file"),
    "flow-unknown-command": (["flow", "paint"], None, "No such command 'paint'"),
    "spec-check-no-file": (["spec", "check", "nosuch"], None, "no spec file 'nosuch'"),
    "spec-draw-out-is-a-file": (["spec", "draw", "react", "-o", "file"], None, "is a file"),
    "spec-show-no-file": (["spec", "show", "nosuch"], None, "no spec file"),
    "spec-validate-no-prompt": (["spec", "validate-examples", "react", "none.txt"], None, "no prompt file"),
}


@pytest.mark.parametrize("mistake", MISTAKES)
def test_a_mistake_is_one_line(place: Path, mistake: str, monkeypatch: pytest.MonkeyPatch) -> None:
    args, config, words = MISTAKES[mistake]
    if config is not None:
        monkeypatch.setenv("STATEBOUND_CONFIG", str(place / config))
    result = CliRunner().invoke(app, args)
    assert result.exit_code != 0 and isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output and "╭" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert words in lines[0], lines[0]
    assert not (place / "r").exists()  # a refused eval leaves nothing behind


def test_every_subcommand_has_a_mistake() -> None:
    root = typer.main.get_command(app)
    commands = {name for name, command in root.commands.items()  # type: ignore[attr-defined]
                for name in [name, *(f"{name} {sub}" for sub in getattr(command, "commands", {}))]}
    tried = {" ".join(args[:2]) if args[0] in ("flow", "spec", "mcp") else args[0] for args, _, _ in MISTAKES.values()}
    assert commands - {"flow", "spec", "mcp"} <= tried | {"flow paint"}, commands - tried
