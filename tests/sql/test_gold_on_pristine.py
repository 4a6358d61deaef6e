"""Where the gold query runs when an episode is graded (issue #51). Upstream's reward runs it in the
episode's database as the agent left it: DELETE every row, SELECT what is left (nothing), submit,
and the empty gold result matches, reward 1.0, on both backends. ``gold_on="pristine"`` runs it on
an untouched copy instead; either way the episode is flagged as one that changed its data."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from statebound.bench.store import RunStore
from statebound.cli.app import app
from statebound.envs.sql import SqlEnvironment

FRIEND_TASK = "59"  # SELECT student_id , count(*) FROM Friend GROUP BY student_id  (network_1)
DESTROY = ["execute[DELETE FROM friend]", "execute[SELECT student_id, count(*) FROM friend GROUP BY student_id]",
           "submit"]


def _destroy(env: SqlEnvironment) -> tuple[float, dict[str, float]]:
    try:
        env.reset(FRIEND_TASK)
        for action in DESTROY:
            env.step(action)
        score = env.score()
        return score.reward, dict(score.metrics)
    finally:
        env.close()


@pytest.fixture(params=["sqlite", "mysql"])
def backend(request: pytest.FixtureRequest, sqlite_backend):
    return sqlite_backend if request.param == "sqlite" else request.getfixturevalue("mysql_backend")


def test_upstreams_reward_gives_a_destroyed_database_full_marks_and_pristine_does_not(backend) -> None:
    reward, metrics = _destroy(SqlEnvironment(backend=backend))
    assert reward == 1.0 and metrics["changed_data"] == 1.0  # documented: upstream's gold runs on what is left
    reward, metrics = _destroy(SqlEnvironment(backend=backend, gold_on="pristine"))
    assert reward == 0.0 and metrics["changed_data"] == 1.0
    env = SqlEnvironment(backend=backend, gold_on="pristine")  # the gold itself, changing nothing: still solved
    env.reset(FRIEND_TASK)
    env.step(f"execute[{env.task.gold}]")
    env.step("submit")
    assert env.score().reward == 1.0 and env.score().metrics["changed_data"] == 0.0
    env.close()


def test_the_option_runs_through_eval_and_the_report_flags_changed_episodes(tmp_path: Path, sqlite_backend) -> None:
    replay = tmp_path / "destroy.jsonl"
    replay.write_text('{"task": "59", "actions": ["execute[DELETE FROM friend]", '
                      '"execute[SELECT student_id, count(*) FROM friend GROUP BY student_id]", "submit"]}\n')
    rewards = {}
    for gold_on in ("episode", "pristine"):
        out = tmp_path / gold_on
        result = CliRunner().invoke(app, [
            "eval", "intercode-sql", "-a", "replay", "-m", "scripted", "-O", f"replay={replay}", "-O", f"gold_on={gold_on}",
            "-O", f"cache_dir={sqlite_backend.directory.parents[1]}", "--out", str(out), "--no-progress", "--no-plots"])
        assert result.exit_code == 0, result.output
        assert "Changed %" in result.output
        with RunStore(out, read_only=True) as store:
            (episode,) = store.results()
        assert episode.meta["changed_data"] == 1.0
        rewards[gold_on] = episode.reward
    assert rewards == {"episode": 1.0, "pristine": 0.0}
