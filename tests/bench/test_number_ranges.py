"""Numbers on the command line and in options are range-checked when they are read (issue #51): a
seed, a size or a limit that no run can keep or use is one line (exit 2) before anything runs or
is stored, never a traceback from the store nor gigabytes allocated for tasks."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from statebound.cli.app import app

ORACLE = "function:statebound.benchmarks.toy:oracle"
PAST_INT64 = str(2**63)
runner = CliRunner()


@pytest.mark.parametrize(("args", "said"), [
    (["--seed", "100000000000000000000"], "--seed"),
    (["--seed", PAST_INT64], "--seed"),
    (["-O", "count=100000000000000000000"], "past the largest number a run keeps"),
    (["-O", "count=100000000"], "count=100000000: input should be less than or equal to 100000"),
    (["-O", "seed=1e400"], "give a finite number"),
    (["--model-option", "temperature=1e999"], "give a finite number"),
    (["-j", "0"], "--concurrency"),
    (["-j", "100000"], "--concurrency"),
    (["--timeout", "inf"], "--timeout must be more than 0 seconds (and at most"),
    (["--timeout", "nan"], "--timeout must be more than 0 seconds (and at most"),
    (["--max-turns", PAST_INT64], "--max-turns"),
    (["--limit", PAST_INT64], "--limit"),
])
def test_a_number_no_run_can_keep_is_one_line_before_anything_runs(tmp_path: Path, args: list[str], said: str) -> None:
    out = tmp_path / "run"
    result = runner.invoke(app, ["eval", "toy", "-a", "direct", "-m", ORACLE, "--out", str(out), "--no-progress",
                                 "--no-plots", *args])
    assert result.exit_code == 2, result.output
    assert result.output.startswith("error: ") and said in result.output and "Traceback" not in result.output
    assert not out.exists()


def test_show_refuses_a_seed_no_store_keeps(tmp_path: Path) -> None:
    run = tmp_path / "run"
    made = runner.invoke(app, ["eval", "toy", "-a", "direct", "-m", ORACLE, "--limit", "1", "--out", str(run),
                               "--no-progress", "--no-plots"])
    assert made.exit_code == 0, made.output
    shown = runner.invoke(app, ["show", str(run), "--task", "toy-000", "--seed", PAST_INT64])
    assert shown.exit_code == 2 and "--seed" in shown.output and "Traceback" not in shown.output
