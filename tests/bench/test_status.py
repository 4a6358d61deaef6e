"""statebound status: progress per agent, time left, read-only on the store."""

import hashlib
import sqlite3

import pytest
from typer.testing import CliRunner

from statebound.bench.models import ModelSpec
from statebound.bench.plan import RunConfig
from statebound.bench.result import EpisodeResult
from statebound.bench.store import RunNotFound, RunStore
from statebound.cli.app import app
from statebound.report.status import find_runs, run_progress, status_rows

TASKS = ("t1", "t2", "t3", "t4")


def _partial_run(run_dir):
    """Agent a: 3 of 4 stored (one crashed, walls 10 s and 30 s); agent b: nothing stored yet."""
    config = RunConfig(benchmark="toy", agents=("a", "b"), models=(ModelSpec("m"),), task_ids=TASKS)
    with RunStore(run_dir) as store:
        store.start(config, resume=False)
        for position, (task, wall, error) in enumerate([("t1", 10.0, None), ("t2", 30.0, None), ("t3", 99.0, "boom")]):
            result = EpisodeResult(task=task, agent="a", model="m", wall_seconds=wall, error=error)
            store.save(result, benchmark="toy", position=position)


def test_progress_counts_and_time_left(tmp_path):
    _partial_run(tmp_path)
    a, b = run_progress(tmp_path)
    assert (a.agent, a.planned, a.stored, a.crashed, a.left) == ("a", 4, 3, 1, 1)
    assert a.mean_seconds == pytest.approx(20.0)  # crashed episodes do not count towards the pace
    assert a.seconds_left(workers=1) == pytest.approx(20.0)
    assert a.seconds_left(workers=2) == pytest.approx(10.0)
    assert (b.stored, b.left, b.mean_seconds, b.last_finished) == (0, 4, None, None)
    assert b.seconds_left() is None  # no pace yet: unknown, not zero

    header, rows = status_rows([a, b], workers=1, now=a.last_finished + 120)
    assert "run" not in header  # one run per agent: the directory tells nothing more
    assert rows[0][header.index("done")] == "3/4" and rows[0][header.index("since last")] == "2m"
    assert rows[1][header.index("s/episode")] == "?" and rows[1][header.index("since last")] == "never"
    assert rows[-1][0] == "total" and rows[-1][header.index("done")] == "3/8"
    assert rows[-1][header.index("left (1 worker)")] == "0m + ?"


def test_the_run_column_appears_when_runs_share_an_agent(tmp_path):
    _partial_run(tmp_path / "one")
    _partial_run(tmp_path / "two")
    progress = [item for run in find_runs([tmp_path]) for item in run_progress(run)]
    header, rows = status_rows(progress, workers=1, now=0.0)
    assert header[0] == "run" and [row[0] for row in rows[:-1]] == [str(tmp_path / "one")] * 2 + [str(tmp_path / "two")] * 2


def test_status_leaves_a_committed_store_untouched(tmp_path):
    _partial_run(tmp_path)
    store = tmp_path / "run.sqlite"
    db = sqlite3.connect(store)
    db.execute("PRAGMA journal_mode=DELETE")  # how records are committed
    db.close()
    before = hashlib.sha256(store.read_bytes()).hexdigest()
    run_progress(tmp_path)
    assert hashlib.sha256(store.read_bytes()).hexdigest() == before
    assert not (tmp_path / "run.sqlite-wal").exists() and not (tmp_path / "run.sqlite-shm").exists()


def test_find_runs_looks_below_and_says_when_there_is_none(tmp_path):
    _partial_run(tmp_path / "bench" / "b-agent")
    _partial_run(tmp_path / "bench" / "a-agent")
    assert find_runs([tmp_path]) == [tmp_path / "bench" / "a-agent", tmp_path / "bench" / "b-agent"]
    assert find_runs([tmp_path / "bench" / "a-agent", tmp_path]) == find_runs([tmp_path])  # each run once
    (tmp_path / "empty").mkdir()
    with pytest.raises(RunNotFound, match="holds no run"):
        find_runs([tmp_path / "empty"])


def test_status_command_on_a_finished_toy_run(tmp_path):
    runner = CliRunner()
    toy = ["eval", "toy", "-m", "function:statebound.benchmarks.toy:oracle", "-O", "count=5", "--no-progress", "--no-plots"]
    assert runner.invoke(app, [*toy, "-a", "direct", "--out", str(tmp_path / "run")]).exit_code == 0
    result = runner.invoke(app, ["status", str(tmp_path), "-j", "2"])
    assert result.exit_code == 0, result.output
    header, row = (line.split("\t") for line in result.output.strip().splitlines())
    assert dict(zip(header, row)) | {"s/episode": "", "since last": ""} == {
        "benchmark": "toy", "agent": "direct", "model": "function:statebound.benchmarks.toy:oracle", "done": "5/5",
        "crashed": "0", "s/episode": "", "left (2 workers)": "0m", "since last": "",
    }
    missing = runner.invoke(app, ["status", str(tmp_path / "nowhere")])
    assert missing.exit_code == 2 and "holds no run" in missing.output
