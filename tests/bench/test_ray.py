"""A Ray run stores the same results as a local run (local Ray cluster, 2 CPUs)."""

import shutil
import tempfile

import pytest

from statebound.bench.evaluate import Execution, execute_run, prepare_run
from statebound.bench.store import RunStore
from statebound.report.finish import finish_run

pytestmark = pytest.mark.integration


@pytest.fixture(autouse=True)
def private_ray_dir(monkeypatch):
    """Each test's cluster keeps its sockets and logs in a folder of its own, so a cluster running
    beside the suite (a benchmark record, say) keeps its /tmp/ray/session_latest."""
    ray_tmp = tempfile.mkdtemp(prefix="sbray-", dir="/tmp")  # short: socket paths have a limit
    monkeypatch.setenv("RAY_TMPDIR", ray_tmp)
    yield
    shutil.rmtree(ray_tmp, ignore_errors=True)


def _rows(run_dir):
    with RunStore(run_dir, create=False) as store:
        results = store.results(with_trajectories=True)
    return [({**r.row(), "wall_seconds": None}, r.trajectory) for r in results]


async def test_ray_run_equals_local_run(tmp_path):
    ray = pytest.importorskip("ray")
    config, benchmark = prepare_run(
        "toy", agents=["direct", "verify"], models=["function:statebound.benchmarks.toy:oracle"],
        benchmark_options={"count": 12}, seeds=[0, 1],
    )
    local, remote = tmp_path / "local", tmp_path / "ray"
    await execute_run(config, out_dir=local, benchmark=benchmark, execution=Execution(progress=False))
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        outcome = await execute_run(
            config, out_dir=remote, execution=Execution(executor="ray", concurrency=8, progress=False)
        )
    finally:
        ray.shutdown()
    assert outcome.ran == 48 and outcome.crashed == 0
    assert _rows(remote) == _rows(local)
    local_report, _ = finish_run([local], out_dir=local, plots=False)
    ray_report, _ = finish_run([remote], out_dir=remote, plots=False)
    assert ray_report.main == local_report.main


def test_a_lost_cluster_is_told_apart_from_a_crashed_worker():
    """Episodes cut off by the cluster going away are not results: the run stops instead."""
    exceptions = pytest.importorskip("ray.exceptions")
    from statebound.bench.executors import cluster_lost

    assert cluster_lost(exceptions.NodeDiedError("node 1 died"))
    assert cluster_lost(exceptions.LocalRayletDiedError())
    assert not cluster_lost(exceptions.WorkerCrashedError())  # may be the episode's own doing
    assert not cluster_lost(ValueError("bad SQL"))


@pytest.mark.parametrize(("deaths", "crashed"), [(1, 0), (9, 1)])
async def test_a_dead_worker_gets_the_episode_once_more(tmp_path, monkeypatch, deaths, crashed):
    """A worker that dies mid-episode (the OOM killer, say) is not the episode's result: it runs
    again on a fresh worker, and is stored as crashed only when that one dies too."""
    ray = pytest.importorskip("ray")
    from pathlib import Path

    log = tmp_path / "deaths.log"
    monkeypatch.setenv("STATEBOUND_TEST_DEATH_LOG", str(log))
    monkeypatch.setenv("STATEBOUND_TEST_DEATHS", str(deaths))
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parent))  # workers import harness_doubles
    config, _ = prepare_run(
        "toy", agents=["direct"], models=["function:harness_doubles:kill_worker_on_toy_003"],
        benchmark_options={"count": 6},
    )
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        outcome = await execute_run(
            config, out_dir=tmp_path / "run", execution=Execution(executor="ray", concurrency=2, progress=False))
    finally:
        ray.shutdown()
    assert (outcome.ran, outcome.crashed) == (6, crashed)
    assert len(log.read_text().splitlines()) == min(deaths, 2)  # the first attempt and one retry at most
    with RunStore(tmp_path / "run", create=False) as store:
        errors = {r.task: r.error for r in store.results() if r.error}
    assert list(errors) == (["toy-003"] if crashed else [])
    assert all("WorkerCrashedError" in error for error in errors.values())


async def test_stopping_the_cluster_mid_run_stores_no_episode_it_cut_off(tmp_path):
    """The run stops with a clear error; what finished is kept and --resume runs the rest."""
    ray = pytest.importorskip("ray")
    import asyncio

    from statebound.errors import EnvironmentUnavailable

    config, _ = prepare_run(
        "toy", agents=["direct"], models=["function:statebound.benchmarks.toy:slow_oracle"],
        benchmark_options={"count": 40},
    )
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    run = asyncio.ensure_future(execute_run(
        config, out_dir=tmp_path, execution=Execution(executor="ray", concurrency=2, progress=False)))
    try:
        while not (tmp_path / "run.sqlite").exists() or _stored(tmp_path) < 2:
            await asyncio.sleep(0.1)
        _kill_local_raylet()  # the cluster goes away under the run
        with pytest.raises(EnvironmentUnavailable, match="--resume"):
            await run
    finally:
        ray.shutdown()
    with RunStore(tmp_path, create=False) as store:
        results = store.results()
    assert 2 <= len(results) < 40 and all(r.error is None for r in results)


def _kill_local_raylet() -> None:
    import psutil

    raylets = [p for p in psutil.Process().children(recursive=True) if p.name() == "raylet"]
    assert raylets, "ray.init started no raylet under this process"
    for process in raylets:
        process.kill()


def _stored(run_dir) -> int:
    import sqlite3

    with sqlite3.connect(run_dir / "run.sqlite", timeout=5) as db:
        try:
            return db.execute("SELECT count(*) FROM episodes").fetchone()[0]
        except sqlite3.OperationalError:  # the table is not there yet
            return 0
