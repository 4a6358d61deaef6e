"""An agent of the user's own that is a flow (``FlowAgent``) is refused before the first episode
when the model cannot run what its Picks need, as the bundled scoped agents are (exit 2, nothing
stored); one it can run starts."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from statebound.cli.app import app

TICKETS = Path(__file__).resolve().parents[2] / "docs" / "examples" / "tickets.py"
NO_SCORING = "function:statebound.benchmarks.toy:oracle"  # a model that returns no log-probabilities


def test_an_own_flow_agent_whose_pick_needs_scoring_is_refused_before_the_first_episode(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["eval", f"{TICKETS}:Tickets", "-a", f"{TICKETS}:scoped", "-m", NO_SCORING,
                                      "--limit", "2", "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert not out.exists()
    assert "Pick 'team'" in result.output and "cannot run method=score: it lacks log-probabilities of given " \
        "text" in " ".join(result.output.split())


def test_an_own_agent_the_model_can_run_starts(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["eval", f"{TICKETS}:Tickets", "-a", f"{TICKETS}:control", "-m", NO_SCORING,
                                      "--limit", "2", "--out", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    assert "2 episodes run" in result.output
