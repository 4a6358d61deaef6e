"""Running an evaluation: prepare a run, then execute it into its store. Writing its exports and
report is :func:`statebound.report.finish.finish_run`, one layer up:

```python
config, benchmark = prepare_run("toy", agents=["direct", "verify"],
                                models=["function:statebound.benchmarks.toy:oracle"])
outcome = asyncio.run(execute_run(config, out_dir="runs/toy", benchmark=benchmark))
report, files = finish_run(["runs/toy"], out_dir="runs/toy")
```
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from statebound.bench.diagrams import store_diagrams
from statebound.bench.episode import Episode, run_episode
from statebound.bench.executors import make_executor
from statebound.bench.models import ModelSpec
from statebound.bench.plan import RunConfig, TaskSelection, select_tasks
from statebound.bench.registry import LoadedBenchmark, load_benchmark
from statebound.bench.run_lock import RunLock
from statebound.bench.runner import RunOutcome, run_episodes
from statebound.bench.store import RunStore, check_run_dir
from statebound.contract.benchmark import EpisodeLimits, Task
from statebound.contract.result import EpisodeResult
from statebound.errors import DefinitionError
from statebound.llm.base import LLM
from statebound.llm.registry import check_model
from statebound.user_files import call

__all__ = ["Execution", "execute_run", "prepare_run", "run_task"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Execution:
    """How to run (does not change results): concurrency, executor, resume behaviour, display."""

    concurrency: int = 4
    executor: str = "local"
    ray_address: str | None = None
    ray_num_cpus: int | None = None
    resume: bool = False
    retry_errors: bool = False
    progress: bool = True


def prepare_run(
    benchmark_name: str,
    *,
    agents: Sequence[str],
    models: Sequence[str | ModelSpec],
    seeds: Sequence[int] = (0,),
    selection: TaskSelection | None = None,
    limits: EpisodeLimits | None = None,
    benchmark_options: Mapping[str, Any] | None = None,
) -> tuple[RunConfig, LoadedBenchmark]:
    """Load the benchmark, check the agents, select the tasks and fix the run's configuration
    (``limits.max_turns`` resolved to the benchmark's default when not given)."""
    if not agents or not models:
        raise DefinitionError("give at least one --agent and one --model")
    options = dict(benchmark_options or {})
    benchmark = load_benchmark(benchmark_name, options)
    for agent in agents:
        spec = benchmark.agent(agent)
        if spec.check is not None:
            call(agent, "checking the benchmark's options", spec.check, benchmark.benchmark.options)
    limits = limits or EpisodeLimits()
    if limits.max_turns is None:
        limits = replace(limits, max_turns=benchmark.benchmark.default_max_turns)
    every = benchmark.tasks()
    selection = selection or TaskSelection()
    if not selection.ids:
        selection = replace(selection, ids=_agents_tasks(benchmark, agents, every))
    tasks = select_tasks(every, selection)
    config = RunConfig(
        benchmark=benchmark_name,
        benchmark_options=benchmark.benchmark.options.model_dump(mode="json"),  # resolved: a user file's too
        agents=tuple(agents),
        models=tuple(m if isinstance(m, ModelSpec) else ModelSpec(m) for m in models),
        seeds=tuple(int(s) for s in seeds) or (0,),
        task_ids=tuple(task.id for task in tasks),
        limits=limits,
    )
    return config, benchmark


def _agents_tasks(benchmark: LoadedBenchmark, agents: Sequence[str], every: Sequence[Task]) -> tuple[str, ...]:
    """The ids of the tasks that every agent limited to some (a replay: its file's) can run, in the
    benchmark's order; ``()`` when no agent is limited."""
    limited = [(agent, set(call(agent, "listing the tasks it can run", spec.tasks, benchmark.benchmark.options)))
               for agent in agents if (spec := benchmark.agent(agent)).tasks is not None]
    if not limited:
        return ()
    ids = tuple(task.id for task in every if all(task.id in allowed for _, allowed in limited))
    if not ids:
        names = " and ".join(agent for agent, _ in limited)
        raise DefinitionError(f"{names} can run no task of {benchmark.name} (a replay file's task ids must be "
                              f"{benchmark.name}'s, e.g. {', '.join(task.id for task in every[:3])})")
    return ids


async def execute_run(
    config: RunConfig,
    *,
    out_dir: str | Path,
    benchmark: LoadedBenchmark | None = None,
    execution: Execution = Execution(),
) -> RunOutcome:
    """Run every episode of ``config`` missing from ``out_dir``'s store, holding the directory's
    lock (:class:`~statebound.bench.run_lock.RunLock`: a second run on it is refused, naming this one).

    Everything that can be checked before the first episode is checked before anything is
    written: the run directory (:func:`~statebound.bench.store.check_run_dir`), the tasks, the
    models' names and options, then (:meth:`~statebound.bench.executors.Executor.prepare`) the
    models opened and what the agents need of them (local executor; Ray workers open their own). So a refused run
    leaves nothing behind, and a directory is never left in a state that neither a fresh run nor
    ``--resume`` accepts."""
    benchmark = benchmark or load_benchmark(config.benchmark, config.benchmark_options)
    by_id = {task.id: task for task in benchmark.tasks()}
    missing = [task_id for task_id in config.task_ids if task_id not in by_id]
    if missing:
        raise DefinitionError(f"{config.benchmark} no longer has tasks {missing[:5]}")
    if execution.concurrency < 1:
        raise DefinitionError(f"--concurrency must be at least 1, got {execution.concurrency}")
    check_run_dir(out_dir, config, resume=execution.resume)  # before the lock makes the directory
    with RunLock(out_dir):  # one writer per run directory, from its first read of the store to its last write
        check_run_dir(out_dir, config, resume=execution.resume)  # again: another run may have ended since
        for model in config.models:  # names and option names, before a Ray cluster is started
            check_model(model.name, **dict(model.options))
        executor = make_executor(
            execution.executor,
            benchmark_name=config.benchmark,
            benchmark_options=config.benchmark_options,
            benchmark=benchmark,
            ray_address=execution.ray_address,
            ray_num_cpus=execution.ray_num_cpus,
        )
        try:
            await executor.prepare(config)
            with RunStore(out_dir) as store:
                if config.task_ids:  # each flow agent's diagram, kept for readers that run no code
                    store_diagrams(store, benchmark, config.agents, by_id[config.task_ids[0]], config.limits.max_turns)
                return await run_episodes(
                    config,
                    [by_id[task_id] for task_id in config.task_ids],
                    store=store,
                    executor=executor,
                    concurrency=execution.concurrency,
                    resume=execution.resume,
                    retry_errors=execution.retry_errors,
                    progress=execution.progress,
                )
        finally:
            await executor.aclose()


async def run_task(
    benchmark: str | LoadedBenchmark,
    agent: str,
    task: str,
    *,
    llm: LLM,
    options: Mapping[str, Any] | None = None,
    seed: int = 0,
    limits: EpisodeLimits = EpisodeLimits(),
) -> EpisodeResult:
    """One episode of ``agent`` on task ``task``, graded, without a store: what a run does for each
    of its episodes (``benchmark`` by name with its raw ``options``, or already loaded)."""
    loaded = benchmark if isinstance(benchmark, LoadedBenchmark) else load_benchmark(benchmark, options)
    spec = loaded.agent(agent)
    if spec.check is not None:
        spec.check(loaded.benchmark.options)
    by_id = {t.id: t for t in loaded.tasks()}
    if task not in by_id:
        raise DefinitionError(f"{loaded.name} has no task {task!r}")
    episode = Episode(task=by_id[task], agent=agent, model=llm.model, seed=seed)
    return await run_episode(loaded.benchmark, {agent: spec}, episode, llm=llm, limits=limits)

