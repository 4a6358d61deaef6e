"""Induction on the real ALFWorld engine: walkthroughs through the harness keep the admissible
commands, two folds of machines learn from them, and a machine plays games it never saw."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from statebound.bench.registry import agent_kinds
from statebound.bench.store import RunStore
from statebound.cli.app import app

pytest.importorskip("alfworld")
pytestmark = [pytest.mark.integration, pytest.mark.slow]

ORACLE = "function:statebound.benchmarks.toy:oracle"
GAMES = "heat-094,heat-095,heat-096,heat-097,cool-073,cool-074,cool-075,cool-076"


def test_walkthroughs_teach_two_folds_that_play_games_they_never_saw(tmp_path: Path):
    if "induced" not in agent_kinds():
        pytest.skip("the agent kinds are registered by entry point: reinstall statebound (scripts/setup.sh)")
    runner = CliRunner()
    teacher = tmp_path / "walkthrough"
    done = runner.invoke(app, ["eval", "alfworld", "-a", "walkthrough", "-m", ORACLE, "--tasks", GAMES, "-j", "1",
                               "--no-plots", "--no-progress", "--out", str(teacher)])
    assert done.exit_code == 0, done.output
    out = tmp_path / "induced"
    done = runner.invoke(app, ["induce", str(teacher), "--benchmark", "alfworld", "--folds", "2", "--out", str(out),
                               "--max-turns", "12", "-m", ORACLE, "--no-beside", "-O", "choice=random",
                               "--no-plots", "--no-progress"])
    assert done.exit_code == 0, done.output
    assert sorted(p.name for p in out.glob("fold-*")) == ["fold-1.json", "fold-2.json"]
    with RunStore(teacher, read_only=True) as store:
        walked = sum(len(r.env_steps) for r in store.results(with_trajectories=True))
    summary = (out / "induction.md").read_text()
    assert f"| all | {walked} | " in summary  # every walkthrough step of the held-out games replayed
    with RunStore(out / "eval-12", read_only=True) as store:
        results = store.results(with_trajectories=True)
    assert {r.agent for r in results} == {f"induced:{out}", f"induced-random:{out}"}
    assert sorted(r.task for r in results if r.agent.startswith("induced:")) == sorted(GAMES.split(","))
    assert all(r.error is None and r.meta["held_out"] for r in results)
    assert all(r.env_steps and r.env_steps[0]["offered"] for r in results)
    assert sum(r.success for r in results) >= 8  # the heat and cool machines know their way
