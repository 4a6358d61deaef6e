"""statebound eval / report / show through the Typer app."""

import subprocess
import sys

import pytest
from typer.testing import CliRunner

from statebound.cli.app import app

runner = CliRunner()
TOY = ["eval", "toy", "-m", "function:statebound.benchmarks.toy:oracle", "-O", "count=6", "--no-progress"]


def test_eval_report_show(tmp_path):
    first, second = tmp_path / "one", tmp_path / "two"
    result = runner.invoke(app, [*TOY, "-a", "direct", "-a", "verify", "--out", str(first)])
    assert result.exit_code == 0, result.output
    assert "| direct | function:statebound.benchmarks.toy:oracle | 6 |" in result.output
    assert "12 episodes run, 0 already stored, 0 crashed" in result.output
    assert (first / "report.md").exists() and (first / "plots" / "cost_vs_success.svg").exists()

    assert runner.invoke(app, [*TOY, "-a", "direct", "--hardness", "hard", "--out", str(second)]).exit_code == 0
    combined = tmp_path / "both"
    result = runner.invoke(app, ["report", str(first), str(second), "--out", str(combined), "--no-plots"])
    assert result.exit_code == 0, result.output
    assert f"| {second.name} | direct | function:statebound.benchmarks.toy:oracle | 3 |" in result.output
    assert "## Paired comparisons" in (combined / "report.md").read_text()
    result = runner.invoke(app, ["report", str(first), str(second), "--out", str(combined), "--no-plots",
                                 "--shared-tasks"])  # only the hard tasks that the second run has
    assert result.exit_code == 0, result.output
    assert f"| {first.name} | direct | function:statebound.benchmarks.toy:oracle | 3 |" in result.output

    shown = runner.invoke(app, ["show", str(first), "--task", "toy-001", "--agent", "verify"])
    assert shown.exit_code == 0, shown.output
    assert shown.output.index("Solve") < shown.output.index("Verify")
    assert "task toy-001" in shown.output and "toy-002" not in shown.output


def test_clear_errors(tmp_path):
    result = runner.invoke(app, ["show", str(tmp_path), "--task", "x"])
    assert result.exit_code == 2 and "holds no run" in result.output
    result = runner.invoke(app, [*TOY, "-a", "direct", "-O", "novalue", "--out", str(tmp_path / "r")])
    assert result.exit_code == 2 and "is not key=value" in result.output
    result = runner.invoke(app, [*TOY, "-a", "direct", "--executor", "dask", "--out", str(tmp_path / "r2")])
    assert result.exit_code == 2 and "unknown executor 'dask'" in result.output


def test_help_stays_light():
    code = ("import sys; from statebound.cli.app import app; "
            "heavy = [m for m in ('numpy', 'scipy', 'matplotlib', 'ray', 'openai') if m in sys.modules]; "
            "print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_function_models_may_declare_grammars():
    from statebound.bench.models import ModelSpec, open_llm
    from statebound.errors import DefinitionError

    name = "function:statebound.benchmarks.toy:oracle"
    assert open_llm(ModelSpec(name, {"grammar": True})).capabilities.grammar
    assert not open_llm(ModelSpec(name)).capabilities.grammar
    with pytest.raises(DefinitionError, match="unknown option"):
        open_llm(ModelSpec(name, {"temperature": 1}))
