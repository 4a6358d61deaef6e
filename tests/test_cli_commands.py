"""Every subcommand the README and docs use is registered on the ``statebound`` command, and the
commands docs/tour.md lists run as written."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from statebound.cli.app import app


@pytest.mark.parametrize(
    "command", ["eval", "report", "show", "run", "models", "flow draw", "flow check", "spec check", "spec draw"]
)
def test_subcommand_is_registered(command: str) -> None:
    result = CliRunner().invoke(app, [*command.split(), "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage" in result.output


COMMANDS = ["eval", "report", "show", "status", "models", "run", "threads", "clean", "flow draw", "flow check", "spec check",
            "spec draw", "spec show", "spec validate-examples"]


@pytest.mark.parametrize("command", COMMANDS)
def test_help_has_an_example_and_readable_types(command: str) -> None:
    result = CliRunner().invoke(app, [*command.split(), "--help"], env={"COLUMNS": "120"})
    assert result.exit_code == 0, result.output
    assert "Example" in result.output and f"statebound {command} " in result.output.replace("\n", " ")
    for python_type in ("<bool>", "<str>", "<int>", "<float>", "<path>", "list[", "<Path>"):
        assert python_type not in result.output, (python_type, result.output)


def test_version() -> None:
    from importlib.metadata import version

    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0 and result.output.strip() == f"statebound {version('statebound')}"


def test_eval_without_an_agent_names_the_benchmarks_agents() -> None:
    result = CliRunner().invoke(app, ["eval", "toy", "-m", "scripted"], env={"COLUMNS": "200"})
    assert result.exit_code == 2 and "toy's agents: direct, verify" in result.output
    unknown = CliRunner().invoke(app, ["eval", "tyo"], env={"COLUMNS": "200"})
    assert unknown.exit_code == 2 and "Did you mean 'toy'?" in unknown.output


def test_report_help_explains_the_columns() -> None:
    result = CliRunner().invoke(app, ["report", "--help"], env={"COLUMNS": "200"})
    for header in ("SR %", "Error %", "Avg p-token", "McNemar p", "Choices/ep", "How episodes ended"):
        assert f"{header}: " in result.output


def _tour_commands() -> list[str]:
    """The command lines of docs/tour.md's "The commands" block (continuation lines joined)."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "tour.md").read_text(encoding="utf-8")
    block = text.split("## The commands", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    commands: list[str] = []
    for line in block.splitlines():
        code = line.split("  #", 1)[0].rstrip()
        if commands and commands[-1].endswith("\\"):
            commands[-1] = commands[-1][:-1] + " " + code.strip()
        elif code.startswith("statebound "):
            commands.append(code)
    return commands


def test_the_tours_commands_that_need_no_model_run_as_written(tmp_path, monkeypatch) -> None:
    """The embedded-model lines (and the report, show and status of their run) are timed by hand."""
    import shlex

    monkeypatch.chdir(tmp_path)
    commands = _tour_commands()
    assert len(commands) >= 12 and any("-a stateflow-scoped" in c for c in commands)
    quick = [c for c in commands if "smollm2" not in c and "runs/sql" not in c and c != "statebound run arithmetic"]
    assert len(quick) >= 8
    for command in quick:
        result = CliRunner().invoke(app, shlex.split(command)[1:], env={"COLUMNS": "120"})
        assert result.exit_code == 0, (command, result.output)
    assert (tmp_path / "runs" / "toy" / "report.html").exists() and (tmp_path / "diagrams").is_dir()
