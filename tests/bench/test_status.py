"""statebound status: progress per agent, time left, read-only on the store."""

import hashlib
import sqlite3

import pytest
from typer.testing import CliRunner

from statebound.bench.models import ModelSpec
from statebound.bench.plan import RunConfig
from statebound.bench.store import RunNotFound, RunStore
from statebound.cli.app import app
from statebound.contract.result import EpisodeResult
from statebound.report.status import find_runs, run_progress, status_section

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
    assert (b.stored, b.left, b.mean_seconds, b.last_finished) == (0, 4, None, None)

    table = status_section([a, b], workers=1, now=a.last_finished + 120)
    header, (first, second), total = table.header, table.rows, table.footer
    assert "run" not in header  # one run per agent: the directory tells nothing more
    assert first[header.index("done")] == "3/4" and first[header.index("since last")] == "2m00s"
    assert first[header.index("s/episode")] == "20" and first[header.index("left (1 worker)")] == "20s"
    # b has not finished an episode: estimated at the run's pace so far (a's), and marked so
    assert second[header.index("s/episode")] == "~20" and second[header.index("left (1 worker)")] == "~1m20s"
    assert second[header.index("since last")] == "never"
    assert total[header.index("agent")] == "total" and total[header.index("done")] == "3/8"
    assert total[header.index("left (1 worker)")] == "1m40s"
    two = status_section([a, b], workers=2, now=0.0)
    assert two.footer[two.header.index("left (2 workers)")] == "50s"


def test_right_after_an_interrupt_the_time_left_counts_every_episode_to_go(tmp_path):
    """The first agent's episodes all stored fast, the second's none: 388 to go are not '0m'."""
    config = RunConfig(benchmark="toy", agents=("a", "b"), models=(ModelSpec("m"),),
                       task_ids=tuple(f"t{i}" for i in range(200)))
    with RunStore(tmp_path) as store:
        store.start(config, resume=False)
        for position in range(12):
            store.save(EpisodeResult(task=f"t{position}", agent="a", model="m", wall_seconds=0.05),
                       benchmark="toy", position=position)
    table = status_section(run_progress(tmp_path), workers=1, now=0.0)
    header = table.header
    assert [row[header.index("s/episode")] for row in table.rows] == ["0.05", "~0.05"]
    assert table.footer[header.index("left (1 worker)")] == "19s"  # 388 x 0.05 s


def test_the_run_column_appears_when_runs_share_an_agent(tmp_path):
    _partial_run(tmp_path / "one")
    _partial_run(tmp_path / "two")
    progress = [item for run in find_runs([tmp_path]) for item in run_progress(run)]
    table = status_section(progress, workers=1, now=0.0)
    assert table.header[0] == "run"
    assert [row[0] for row in table.rows] == [str(tmp_path / "one")] * 2 + [str(tmp_path / "two")] * 2


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


def test_a_file_that_is_not_a_store_is_named_not_a_traceback(tmp_path):
    (tmp_path / "plots").mkdir()
    (tmp_path / "plots" / "run.sqlite").touch()  # an empty file, as a stray tool leaves one
    with pytest.raises(RunNotFound, match=r"plots/run.sqlite is not a run store \(no episodes or run table\)"):
        run_progress(tmp_path / "plots")
    assert (tmp_path / "plots" / "run.sqlite").stat().st_size == 0  # read, not written
    other = sqlite3.connect(tmp_path / "other.sqlite")
    other.execute("CREATE TABLE run (key TEXT)")
    other.close()
    (tmp_path / "other.sqlite").rename(tmp_path / "plots" / "run.sqlite")
    with pytest.raises(RunNotFound, match=r"no episodes table"):
        RunStore(tmp_path / "plots", read_only=True)


def test_status_command_on_a_finished_toy_run(tmp_path):
    runner = CliRunner()
    toy = ["eval", "toy", "-m", "function:statebound.benchmarks.toy:oracle", "-O", "count=5", "--no-progress", "--no-plots"]
    assert runner.invoke(app, [*toy, "-a", "direct", "--out", str(tmp_path / "run")]).exit_code == 0
    result = runner.invoke(app, ["status", str(tmp_path), "-j", "2"])
    assert result.exit_code == 0, result.output
    header, row = (line.split("\t") for line in result.output.strip().splitlines())
    assert dict(zip(header, row)) | {"s/episode": "", "since last": ""} == {
        "benchmark": "toy", "agent": "direct", "model": "function:statebound.benchmarks.toy:oracle", "done": "5/5",
        "crashed": "0", "s/episode": "", "left (2 workers)": "0s", "since last": "",
    }
    missing = runner.invoke(app, ["status", str(tmp_path / "nowhere")])
    assert missing.exit_code == 2 and "nowhere does not exist" in missing.output
