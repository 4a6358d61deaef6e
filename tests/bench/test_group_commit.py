"""Group commit: episodes finishing in one event-loop turn share a transaction; a failing store
stops the run instead of being swallowed."""

import sqlite3

import pytest

from statebound.bench.evaluate import Execution, execute_run, prepare_run
from statebound.bench.store import RunStore

ORACLE = "function:statebound.benchmarks.toy:oracle"


async def _run(tmp_path, *, count: int, concurrency: int):
    config, benchmark = prepare_run("toy", agents=["direct"], models=[ORACLE], benchmark_options={"count": count})
    return await execute_run(config, out_dir=tmp_path, benchmark=benchmark,
                             execution=Execution(concurrency=concurrency, progress=False))


async def test_episodes_finishing_together_share_a_transaction(tmp_path, monkeypatch):
    batches: list[list[str]] = []
    original = RunStore.save_many

    def recording(self, finished, *, benchmark):
        batches.append([result.task for result, _ in finished])
        original(self, finished, benchmark=benchmark)

    monkeypatch.setattr(RunStore, "save_many", recording)
    outcome = await _run(tmp_path, count=40, concurrency=20)
    assert outcome.ran == 40
    stored = [task for batch in batches for task in batch]
    assert sorted(stored) == [f"toy-{i:03d}" for i in range(40)]  # each episode stored exactly once
    assert max(len(batch) for batch in batches) > 1  # instant replies finish together
    with RunStore(tmp_path, create=False) as store:
        assert len(store.results()) == 40


async def test_one_episode_at_a_time_commits_each_alone(tmp_path, monkeypatch):
    sizes: list[int] = []
    original = RunStore.save_many

    def recording(self, finished, *, benchmark):
        sizes.append(len(finished))
        original(self, finished, benchmark=benchmark)

    monkeypatch.setattr(RunStore, "save_many", recording)
    await _run(tmp_path, count=5, concurrency=1)
    assert sizes == [1, 1, 1, 1, 1]


async def test_a_failing_store_stops_the_run_with_its_error(tmp_path, monkeypatch):
    calls = 0
    original = RunStore.save_many

    def failing_second_time(self, finished, *, benchmark):
        nonlocal calls
        calls += 1
        if calls == 2:
            raise sqlite3.OperationalError("disk I/O error")
        original(self, finished, benchmark=benchmark)

    monkeypatch.setattr(RunStore, "save_many", failing_second_time)
    with pytest.raises(sqlite3.OperationalError, match="disk I/O error"):
        await _run(tmp_path, count=6, concurrency=1)
    monkeypatch.setattr(RunStore, "save_many", original)
    with RunStore(tmp_path, create=False) as store:
        stored = [r.task for r in store.results()]
    # the episode whose commit failed is not stored; what finished before (and any episode that
    # finished while the run was stopping) is
    assert "toy-001" not in stored and stored[0] == "toy-000"
    outcome = await _run_resume(tmp_path)
    assert outcome.skipped == len(stored) and outcome.ran == 6 - len(stored)
    with RunStore(tmp_path, create=False) as store:
        assert sorted(r.task for r in store.results()) == [f"toy-{i:03d}" for i in range(6)]


async def _run_resume(tmp_path):
    config, benchmark = prepare_run("toy", agents=["direct"], models=[ORACLE], benchmark_options={"count": 6})
    return await execute_run(config, out_dir=tmp_path, benchmark=benchmark,
                             execution=Execution(concurrency=1, progress=False, resume=True))


async def test_a_run_closes_the_models_it_opened(tmp_path, monkeypatch):
    """Models holding connections (the OpenAI-compatible backend) are closed when the run ends."""
    from statebound.bench import executors
    from statebound.benchmarks.toy import oracle
    from statebound.llm.testing import FunctionLLM

    closed: list[str] = []

    class ClosingLLM(FunctionLLM):
        async def aclose(self) -> None:
            closed.append(self.model)

    monkeypatch.setattr(executors, "open_llm", lambda spec: ClosingLLM(oracle, model=spec.name))
    outcome = await _run(tmp_path, count=4, concurrency=2)
    assert outcome.ran == 4
    assert closed == [ORACLE]
