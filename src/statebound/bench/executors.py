"""Where episodes run: in this process (``local``) or spread over a Ray cluster (``ray``).

Both executors take plain data (benchmark name + options, a :class:`ModelSpec`, a task) so the
same call works in a Ray worker: the worker builds the benchmark and opens the model itself, once
per process, via :func:`statebound.bench.registry.load_benchmark` and
:func:`statebound.bench.models.open_llm`, then runs :func:`statebound.bench.episode.run_episode`.
Before a run stores anything, :meth:`Executor.prepare` checks its models: the local executor opens
them and checks each agent's needs against them; the Ray executor leaves that to its workers.
Errors that stop a run (:data:`~statebound.bench.episode.RUN_STOPPING`) stop it from a worker too.
Secrets among a model's options are masked in what an episode stores (its error and traceback).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from statebound.bench.episode import RUN_STOPPING, Episode, check_agent, run_episode
from statebound.bench.models import ModelSpec, open_llm
from statebound.bench.plan import EpisodePlan, RunConfig
from statebound.bench.registry import LoadedBenchmark, load_benchmark
from statebound.contract.benchmark import EpisodeLimits
from statebound.contract.result import EpisodeResult
from statebound.errors import DefinitionError, EnvironmentUnavailable
from statebound.exits import ExitReason
from statebound.llm.base import LLM
from statebound.llm.model_options import secret_values
from statebound.llm.secrets import redact

__all__ = ["Executor", "LocalExecutor", "RayExecutor", "cluster_lost", "make_executor", "without_secrets"]


class Executor(Protocol):
    """Runs one planned episode and returns its result (never raises for a crashed episode)."""

    async def run(self, plan: EpisodePlan, *, limits: EpisodeLimits) -> EpisodeResult: ...

    async def prepare(self, config: RunConfig) -> None:
        """Check before the run stores anything that its models open and suit its agents."""
        ...

    async def aclose(self) -> None:
        """Release what the executor opened (models' connections, a cluster it started)."""
        ...


@dataclass
class _Workspace:
    """Benchmarks and models opened in one process, reused across its episodes."""

    benchmarks: dict[str, LoadedBenchmark] = field(default_factory=dict)
    models: dict[str, LLM] = field(default_factory=dict)

    def benchmark(self, name: str, options: Mapping[str, Any]) -> LoadedBenchmark:
        key = repr((name, sorted(options.items())))
        if key not in self.benchmarks:
            self.benchmarks[key] = load_benchmark(name, options)
        return self.benchmarks[key]

    def llm(self, spec: ModelSpec) -> LLM:
        key = repr((spec.name, sorted(spec.options.items())))
        if key not in self.models:
            self.models[key] = open_llm(spec)
        return self.models[key]

    async def aclose(self) -> None:
        """Close the models that hold connections (OpenAI-compatible clients) and forget them all."""
        models, self.models = list(self.models.values()), {}
        for model in models:
            closer = getattr(model, "aclose", None)
            if closer is not None:
                await closer()

    async def run(
        self, benchmark: str, options: Mapping[str, Any], plan: EpisodePlan, limits: EpisodeLimits
    ) -> EpisodeResult:
        loaded = self.benchmark(benchmark, options)
        episode = Episode(task=plan.task, agent=plan.key.agent, model=plan.model.name, seed=plan.key.seed)
        agents = {episode.agent: loaded.agent(episode.agent)}  # a registered agent or a path.py:name one
        result = await run_episode(loaded.benchmark, agents, episode, llm=self.llm(plan.model), limits=limits)
        return without_secrets(result, plan.model)


def without_secrets(result: EpisodeResult, model: ModelSpec) -> EpisodeResult:
    """``result`` with the secrets among ``model``'s options masked in its error and traceback."""
    secrets = secret_values(model.options)
    if not secrets or result.error is None:
        return result
    meta = dict(result.meta)
    if isinstance(meta.get("traceback"), str):
        meta["traceback"] = redact(meta["traceback"], *secrets)
    return replace(result, error=redact(result.error, *secrets), meta=meta)


@dataclass
class LocalExecutor:
    """Runs episodes as coroutines in this process; ``benchmark`` may be given ready-made."""

    benchmark_name: str
    benchmark_options: Mapping[str, Any] = field(default_factory=dict)
    benchmark: LoadedBenchmark | None = None
    _workspace: _Workspace = field(default_factory=_Workspace)

    def __post_init__(self) -> None:
        if self.benchmark is not None:
            key = repr((self.benchmark_name, sorted(self.benchmark_options.items())))
            self._workspace.benchmarks[key] = self.benchmark

    async def run(self, plan: EpisodePlan, *, limits: EpisodeLimits) -> EpisodeResult:
        return await self._workspace.run(self.benchmark_name, self.benchmark_options, plan, limits)

    async def prepare(self, config: RunConfig) -> None:
        """Open every model (the episodes reuse them) and check each agent's needs against it."""
        loaded = self._workspace.benchmark(self.benchmark_name, self.benchmark_options)
        for model in config.models:
            llm = self._workspace.llm(model)
            for agent in config.agents:
                check_agent(loaded.benchmark, agent, loaded.agent(agent), llm)

    async def aclose(self) -> None:
        await self._workspace.aclose()


def cluster_lost(error: BaseException) -> bool:
    """Whether a Ray task failed because the cluster (a node, the local raylet, Ray itself) went
    away, as opposed to its worker crashing while running the episode."""
    from ray import exceptions

    lost = (exceptions.NodeDiedError, exceptions.LocalRayletDiedError, exceptions.RaySystemError)
    return isinstance(error, lost)


# A worker that dies mid-episode (the OOM killer, a lost process) runs the episode once more on a
# fresh worker; episodes start from scratch, so a retry is safe. Only a second death is stored.
WORKER_RETRIES = 1

_WORKER_SPACE = _Workspace()  # one per Ray worker process, with one event loop kept across tasks
_WORKER_LOOP: asyncio.AbstractEventLoop | None = None


# How long a cancelled episode may take to clean up in its worker before the task gives up on it.
CANCEL_GRACE_SECONDS = 10.0


def _run_in_worker(benchmark: str, options: dict[str, Any], plan: EpisodePlan, limits: EpisodeLimits) -> EpisodeResult:
    global _WORKER_LOOP
    if _WORKER_LOOP is None:
        _WORKER_LOOP = asyncio.new_event_loop()
    episode = _WORKER_LOOP.create_task(_WORKER_SPACE.run(benchmark, options, plan, limits))
    try:
        return _WORKER_LOOP.run_until_complete(episode)
    except BaseException:
        # ray.cancel raises KeyboardInterrupt in the loop, not in the episode: cancel the episode so
        # its cleanup runs (and nothing of it is left in the loop the worker's next task uses)
        episode.cancel()
        with contextlib.suppress(BaseException):
            _WORKER_LOOP.run_until_complete(asyncio.wait([episode], timeout=CANCEL_GRACE_SECONDS))
        raise


@dataclass
class RayExecutor:
    """Sends each episode to a Ray task. ``address``: an existing cluster (default ``RAY_ADDRESS``,
    else a local one started here with ``num_cpus``)."""

    benchmark_name: str
    benchmark_options: Mapping[str, Any] = field(default_factory=dict)
    address: str | None = None
    num_cpus: int | None = None
    _remote: Any = field(default=None, init=False, repr=False)
    _started_here: bool = field(default=False, init=False, repr=False)

    def __post_init__(self) -> None:
        try:
            import ray
        except ImportError as exc:
            raise EnvironmentUnavailable("--executor ray needs Ray: pip install 'statebound[ray]'") from exc
        if not ray.is_initialized():
            address = self.address or os.environ.get("RAY_ADDRESS")
            init: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
            if address:
                init["address"] = address
            elif self.num_cpus is not None:
                init["num_cpus"] = self.num_cpus
            with _keep_sigterm_handler():
                ray.init(**init)
            self._started_here = True
        self._remote = ray.remote(max_retries=WORKER_RETRIES)(_run_in_worker)

    async def prepare(self, config: RunConfig) -> None:
        """Nothing to open here: the workers open the models (their names and options are
        checked before the cluster starts, see :func:`statebound.bench.evaluate.execute_run`)."""

    async def run(self, plan: EpisodePlan, *, limits: EpisodeLimits) -> EpisodeResult:
        ref = self._remote.remote(self.benchmark_name, dict(self.benchmark_options), plan, limits)
        try:
            return await ref
        except asyncio.CancelledError:  # the run stops (Ctrl-C, say): free the worker, store nothing
            import ray

            with contextlib.suppress(Exception):
                ray.cancel(ref)  # a KeyboardInterrupt in the task, so the episode's cleanup runs
            raise
        except Exception as exc:  # noqa: BLE001 - the worker died again: record a crashed episode
            if cluster_lost(exc):  # not the episode's doing: stop the run, store nothing for it
                raise EnvironmentUnavailable(
                    f"the Ray cluster went away ({type(exc).__name__}); episodes in flight were not "
                    "stored: run the same command again with --resume"
                ) from exc
            cause = getattr(exc, "cause", None)  # a RayTaskError carries the worker's exception
            if isinstance(cause, RUN_STOPPING):
                raise cause from None  # as in a local run: every episode would fail alike
            return without_secrets(EpisodeResult(
                task=plan.key.task, agent=plan.key.agent, model=plan.model.name, seed=plan.key.seed,
                error=f"ray: {type(exc).__name__}: {exc}", exit_reason=ExitReason.CRASHED, meta=dict(plan.task.meta),
            ), plan.model)

    async def aclose(self) -> None:
        import ray

        if self._started_here:
            ray.shutdown()


@contextlib.contextmanager
def _keep_sigterm_handler() -> Iterator[None]:
    """``ray.init`` replaces the SIGTERM handler with one that exits at once; keep one the program
    installed itself (``statebound eval`` stops in order on SIGTERM, storing what finished)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGTERM)
    try:
        yield
    finally:
        if callable(previous):
            signal.signal(signal.SIGTERM, previous)


def make_executor(
    kind: str,
    *,
    benchmark_name: str,
    benchmark_options: Mapping[str, Any],
    benchmark: LoadedBenchmark | None = None,
    ray_address: str | None = None,
    ray_num_cpus: int | None = None,
) -> Executor:
    """``kind`` is ``"local"`` or ``"ray"``."""
    if kind == "local":
        return LocalExecutor(benchmark_name, benchmark_options, benchmark)
    if kind == "ray":
        return RayExecutor(benchmark_name, benchmark_options, address=ray_address, num_cpus=ray_num_cpus)
    raise DefinitionError(f"unknown executor {kind!r}; use 'local' or 'ray'")
