"""ALFWorld's report columns: state-tracking accuracy over all tracked steps, put corrections per game."""

import json

import pytest

from statebound.benchmarks.alfworld import Alfworld
from statebound.contract.result import EpisodeResult
from statebound.envs.alfworld import StateCheck, TrackedState, state_accuracy
from statebound.report.metrics import summarize
from statebound.report.tables import Report, to_markdown

FRIDGE = TrackedState(location="fridge 1")
HOLDING = TrackedState(location="countertop 1", inventory=("apple 1",))


def _game(agent, task_type, checks, put_corrections):
    meta = {"task_type": task_type, "put_corrections": put_corrections, **state_accuracy(checks)}
    return EpisodeResult(task=f"{task_type}-0", agent=agent, model="m", meta=meta)


# stateact: game 1 tracks 3 steps (all right), game 2 tracks 1 step (location wrong, inventory right)
RESULTS = [
    _game("stateact", "heat", [StateCheck("fridge 1", "None", FRIDGE)] * 3, 1),
    _game("stateact", "cool", [StateCheck("desk 1", "apple 1", HOLDING)], 0),
    _game("react", "heat", [], 2),
    _game("react", "cool", [], 0),
]


def test_state_accuracy_is_the_share_of_all_tracked_steps():
    stateact, react = summarize(RESULTS, columns=Alfworld.report_columns)
    assert stateact.extra["state_accuracy"] == pytest.approx(75.0)  # 3 of 4 steps, not (100 + 0) / 2
    assert stateact.extra["state_location_accuracy"] == pytest.approx(75.0)
    assert stateact.extra["state_inventory_accuracy"] == pytest.approx(100.0)
    assert stateact.extra["put_corrections"] == 0.5
    assert react.extra["state_accuracy"] is None and react.extra["put_corrections"] == 1.0


def test_markdown_per_task_type_blank_for_react():
    keys = ("agent", "model")
    report = Report(
        keys,
        summarize(RESULTS, by=keys, columns=Alfworld.report_columns),
        {"task_type": summarize(RESULTS, by=(*keys, "task_type"), columns=Alfworld.report_columns)},
        columns=Alfworld.report_columns,
    )
    markdown = to_markdown(report)
    assert "| State acc % | Location acc % | Inventory acc % | Put corrections/game |" in markdown
    assert "| 75.00 | 75.00 | 100.00 | 0.50 |" in markdown
    assert "| stateact | m (not called) | cool | 1 |" in markdown and "| 0.00 | 0.00 | 100.00 | 0.00 |" in markdown  # no tokens: no call
    assert "|  |  |  | 1.00 |" in markdown  # react tracks no state


@pytest.mark.integration
def test_eval_prints_the_columns_on_the_real_engine(tmp_path):
    pytest.importorskip("alfworld")
    from typer.testing import CliRunner

    from statebound.cli.app import app

    reply = ("goal: examine the alarmclock with the desklamp\ncurrent location: starting location\n"
             "current inventory: None\nthought: None\naction: go to desk 2")
    result = CliRunner().invoke(app, [
        "eval", "alfworld", "--agent", "stateact", "--model", "scripted",
        "--model-option", f"replies={json.dumps([reply])}", "--tasks", "examine-000", "--max-turns", "1",
        "--no-progress", "--no-plots", "--out", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    assert "| State acc % | Location acc % | Inventory acc % | Put corrections/game |" in result.output
    assert "| Put corrections/game | Turns cut to fit/game |" in result.output
    assert "| 100.00 | 100.00 | 100.00 | 0.00 | 0.00 | 0.0-79.3 | 0 |" in result.output
