"""`statebound show` on a real InterCode-SQL run (SQLite, a function model): every action as the
environment ran it, the gold query, the expected and the obtained result, the reward, and no line
wider than the terminal."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from statebound.bench.store import RunStore
from statebound.cli.app import app

TASK = "3"  # Count the number of different nationalities of conductors: gold result [(3,)]
GOLD = "SELECT count(DISTINCT Nationality) FROM conductor"


@pytest.fixture(scope="module")
def sql_run(tmp_path_factory: pytest.TempPathFactory, sqlite_backend) -> Path:
    out = tmp_path_factory.mktemp("show") / "run"
    cache = str(sqlite_backend.directory.parent.parent)
    result = CliRunner().invoke(app, ["eval", "intercode-sql", "-a", "gold", "-a", "stateflow-scoped-random",
                                      "-m", "function:statebound.benchmarks.toy:oracle", "--tasks", TASK,
                                      "-O", f"cache_dir={cache}", "--no-plots", "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out


def _show(run: Path, agent: str, columns: int) -> str:
    shown = CliRunner().invoke(app, ["show", str(run), "--task", TASK, "--agent", agent],
                               env={"COLUMNS": str(columns)})
    assert shown.exit_code == 0, shown.output
    return shown.output


def _stored_actions(run: Path, agent: str) -> list[str]:
    with RunStore(run, read_only=True) as store:
        (episode,) = store.episodes(task=TASK, agent=agent)
    return [event["data"]["action"] for event in episode.events
            if event.get("kind") == "message_added" and "action" in (event.get("data") or {})]


@pytest.mark.parametrize("agent", ["gold", "stateflow-scoped-random"])
def test_show_prints_every_action_as_run_and_the_gold_expected_and_obtained(sql_run: Path, agent: str) -> None:
    text = _show(sql_run, agent, 200)
    actions = _stored_actions(sql_run, agent)
    assert len(actions) >= 2 and any(action.startswith("execute[SELECT") for action in actions)
    for action in actions:
        assert f"ran: {action}" in text
    assert f"gold: {GOLD}" in text and "expected: [(3,)]" in text
    obtained = next(line for line in text.splitlines() if "obtained: " in line)
    reward = next(line for line in text.splitlines() if "reward: " in line)
    if agent == "gold":
        assert "obtained: [(3,)]" in obtained and "reward: 1 (success)" in reward
    else:  # the control counts another column: its own result, not the expected one
        assert "[(3,)]" not in obtained and "reward: 0 (failure)" in reward


def test_show_stays_within_a_narrow_terminal(sql_run: Path) -> None:
    text = _show(sql_run, "stateflow-scoped-random", 50)
    assert max(len(line) for line in text.splitlines()) <= 50
    assert "…" in text.splitlines()[0]  # the long heading is cut with an ellipsis
