"""Errors every further episode would meet alike stop the run at once, from any executor, even when
the agent catches them; the episodes that finished are kept."""

import shutil
import tempfile
from pathlib import Path

import pytest

from statebound.bench.episode import Episode, run_episode
from statebound.bench.evaluate import Execution, execute_run, prepare_run
from statebound.bench.registry import load_benchmark
from statebound.bench.store import RunStore
from statebound.contract.benchmark import AgentSpec, EpisodeLimits
from statebound.contract.trace import Trace
from statebound.errors import FatalProviderError, ProviderError
from statebound.exits import ExitReason
from statebound.llm.base import chat
from statebound.llm.testing import FunctionLLM

REFUSED = "function:harness_doubles:refused_on_toy_003"


def _stored(run_dir):
    with RunStore(run_dir, create=False) as store:
        return {r.task: r.error for r in store.results()}


async def test_a_refused_key_stops_a_local_run(tmp_path):
    config, benchmark = prepare_run("toy", agents=["direct"], models=[REFUSED], benchmark_options={"count": 6})
    with pytest.raises(FatalProviderError, match="HTTP 401"):
        await execute_run(config, out_dir=tmp_path, benchmark=benchmark,
                          execution=Execution(concurrency=1, progress=False))
    assert _stored(tmp_path) == {"toy-000": None, "toy-001": None, "toy-002": None}  # toy-003 not stored


async def test_an_agent_that_catches_the_error_does_not_hide_it():
    loaded = load_benchmark("toy", {"count": 2})

    async def catching(task: str, *, llm, env) -> Trace:
        try:
            await llm.complete(chat(("user", task)))
        except ProviderError as error:  # an agent that reports failures in its trace
            return Trace(entries=(), exit=ExitReason.ERROR, error=str(error))
        return Trace(entries=(), exit=ExitReason.FINAL)

    def refuse(request):
        raise FatalProviderError("HTTP 404, not found: check the model name", provider="p")

    agents = {"catching": AgentSpec(build=lambda setup: catching, summary="catches provider errors")}
    task = loaded.benchmark.tasks()[0]
    with pytest.raises(FatalProviderError, match="HTTP 404"):
        await run_episode(loaded.benchmark, agents, Episode(task=task, agent="catching", model="m"),
                          llm=FunctionLLM(respond=refuse), limits=EpisodeLimits())


@pytest.mark.integration
async def test_a_refused_key_stops_a_ray_run(tmp_path, monkeypatch):
    ray = pytest.importorskip("ray")
    ray_tmp = tempfile.mkdtemp(prefix="sbray-", dir="/tmp")  # a private cluster folder (short: socket paths)
    monkeypatch.setenv("RAY_TMPDIR", ray_tmp)
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parent))  # workers import harness_doubles
    config, _ = prepare_run("toy", agents=["direct"], models=[REFUSED], benchmark_options={"count": 6})
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    try:
        with pytest.raises(FatalProviderError, match="HTTP 401") as caught:
            await execute_run(config, out_dir=tmp_path / "run",
                              execution=Execution(executor="ray", concurrency=1, progress=False))
    finally:
        ray.shutdown()
        shutil.rmtree(ray_tmp, ignore_errors=True)
    assert type(caught.value) is FatalProviderError and caught.value.attempts == 1
    stored = _stored(tmp_path / "run")
    assert "toy-003" not in stored and all(error is None for error in stored.values())
