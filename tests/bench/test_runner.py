"""Runner behaviour: concurrency isolation, crash capture, limits, resume, deterministic order."""

import re

import pytest

from statebound.bench.evaluate import Execution, execute_run, prepare_run
from statebound.bench.plan import TaskSelection
from statebound.bench.store import ConfigMismatch, RunStore
from statebound.contract.benchmark import EpisodeLimits
from statebound.errors import DefinitionError

JITTERY = "function:statebound.benchmarks.toy:jittery_oracle"
ORACLE = "function:statebound.benchmarks.toy:oracle"
QUIET = Execution(concurrency=8, progress=False)


async def _run(tmp_path, *, models=(ORACLE,), agents=("direct", "verify"), execution=QUIET, **kwargs):
    config, benchmark = prepare_run("toy", agents=list(agents), models=list(models), **kwargs)
    outcome = await execute_run(config, out_dir=tmp_path, benchmark=benchmark, execution=execution)
    with RunStore(tmp_path, create=False) as store:
        return outcome, store.results(with_trajectories=True)


async def test_concurrent_episodes_keep_their_own_trajectories(tmp_path):
    execution = Execution(concurrency=64, progress=False)
    outcome, results = await _run(
        tmp_path, models=(JITTERY,), execution=execution, seeds=[0, 1],
        benchmark_options={"count": 60},
    )
    assert outcome.ran == 240 and outcome.crashed == 0
    assert len({(r.task, r.agent, r.seed) for r in results}) == 240
    for result in results:
        replies = [e["content"] for e in result.trajectory if e["role"] == "assistant"]
        assert len(replies) == (1 if result.agent == "direct" else 2)
        assert {re.search(r"task (toy-\d+)", text)[1] for text in replies} == {result.task}


async def test_results_are_stored_in_plan_order(tmp_path):
    _, results = await _run(tmp_path, models=(JITTERY,), benchmark_options={"count": 6}, seeds=[3])
    expected = [(agent, f"toy-{i:03d}") for agent in ("direct", "verify") for i in range(6)]
    assert [(r.agent, r.task) for r in results] == expected
    assert {r.seed for r in results} == {3}


async def test_a_crashing_episode_is_recorded_and_the_run_goes_on(tmp_path):
    outcome, results = await _run(
        tmp_path, models=("function:harness_doubles:crash_on_toy_003",), agents=("direct",),
        benchmark_options={"count": 6},
    )
    assert outcome.ran == 6 and outcome.crashed == 1
    crashed = [r for r in results if r.error]
    assert [r.task for r in crashed] == ["toy-003"]
    assert crashed[0].error == "RuntimeError: boom on toy-003"
    assert crashed[0].exit_reason == "crashed" and not crashed[0].success
    assert "boom on toy-003" in crashed[0].meta["traceback"]
    assert sum(r.success for r in results if not r.error) >= 4


async def test_a_configuration_error_stops_the_run_and_keeps_what_finished(tmp_path):
    from statebound.errors import UnsupportedFeature

    with pytest.raises(UnsupportedFeature, match="cannot do what the run asks"):
        await _run(
            tmp_path, models=("function:harness_doubles:unsupported_on_toy_003",), agents=("direct",),
            benchmark_options={"count": 6}, execution=Execution(concurrency=1, progress=False),
        )
    with RunStore(tmp_path) as store:
        stored = {r.task: r for r in store.results()}
    # the failing episode is not stored as a result (a resume runs it again once the cause is
    # fixed); episodes that finished before the run stopped are kept
    assert "toy-003" not in stored
    assert {"toy-000", "toy-001", "toy-002"} <= set(stored)
    assert all(r.error is None for r in stored.values())


async def test_time_limit_ends_an_episode(tmp_path):
    _, results = await _run(
        tmp_path, models=("function:harness_doubles:sleepy",), agents=("direct",),
        benchmark_options={"count": 2}, limits=EpisodeLimits(timeout_s=0.05),
    )
    assert [r.exit_reason for r in results] == ["time_limit", "time_limit"]
    assert all(r.wall_seconds < 2 and not r.success and r.error is None for r in results)


async def test_token_limit_ends_an_episode(tmp_path):
    # each wordy reply costs about 14 prompt + 37 completion tokens; the verify agent needs two calls
    _, results = await _run(
        tmp_path, models=("function:harness_doubles:wordy",), agents=("verify",),
        benchmark_options={"count": 2}, limits=EpisodeLimits(max_tokens=40),
    )
    assert [r.exit_reason for r in results] == ["token_limit", "token_limit"]
    assert all(r.llm_calls == 1 and r.prompt_tokens + r.completion_tokens > 40 for r in results)


async def test_resume_runs_only_what_is_missing(tmp_path):
    selection = TaskSelection(limit=4)
    first, _ = await _run(tmp_path, benchmark_options={"count": 8}, selection=selection)
    assert first.ran == 8
    again = Execution(progress=False, resume=True)
    second, results = await _run(tmp_path, benchmark_options={"count": 8}, selection=selection, execution=again)
    assert (second.ran, second.skipped) == (0, 8)
    assert len(results) == 8


async def test_resume_with_another_configuration_is_refused(tmp_path):
    await _run(tmp_path, benchmark_options={"count": 4})
    with pytest.raises(ConfigMismatch, match=r"configuration differs \(benchmark_options: stored"):
        await _run(tmp_path, benchmark_options={"count": 5}, execution=Execution(progress=False, resume=True))
    fewer, _ = await _run(tmp_path, benchmark_options={"count": 4}, agents=("direct",),
                          execution=Execution(progress=False, resume=True))
    assert fewer.ran == 0  # a resume naming fewer agents continues the whole stored run
    with pytest.raises(ConfigMismatch, match="pass --resume"):
        await _run(tmp_path, benchmark_options={"count": 4})


async def test_retry_errors_replaces_crashed_episodes(tmp_path):
    crashing = "function:harness_doubles:crash_on_toy_003"
    await _run(tmp_path, models=(crashing,), agents=("direct",), benchmark_options={"count": 5})
    retry = Execution(progress=False, resume=True, retry_errors=True)
    outcome, results = await _run(
        tmp_path, models=(crashing,), agents=("direct",), benchmark_options={"count": 5}, execution=retry
    )
    assert (outcome.ran, outcome.skipped, outcome.crashed) == (1, 4, 1)
    assert len(results) == 5


def test_bad_selection_and_agent_are_explained(tmp_path):
    with pytest.raises(DefinitionError, match="unknown task ids"):
        prepare_run("toy", agents=["direct"], models=[ORACLE], selection=TaskSelection(ids=("nope",)))
    with pytest.raises(DefinitionError, match="no task has hardness='extra'"):
        prepare_run("toy", agents=["direct"], models=[ORACLE], selection=TaskSelection(hardness="extra"))
    with pytest.raises(DefinitionError, match="unknown benchmark"):
        prepare_run("nosuch", agents=["direct"], models=[ORACLE])


async def test_unknown_agent_is_refused(tmp_path):
    with pytest.raises(DefinitionError, match="has no agent"):
        await _run(tmp_path, agents=("direct", "oracle"))


def test_selection_filters_by_meta():
    config, _ = prepare_run(
        "toy", agents=["direct"], models=[ORACLE], selection=TaskSelection(hardness="hard", task_type="mul", limit=2)
    )
    assert config.task_ids == ("toy-003", "toy-009")
