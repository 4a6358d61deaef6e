"""The whole evaluation in three calls: prepare a run, execute it, write its exports and report.

```python
config, benchmark = prepare_run("toy", agents=["direct", "verify"],
                                models=["function:statebound.bench.toy:oracle"])
outcome = asyncio.run(execute_run(config, out_dir="runs/toy", benchmark=benchmark))
report, files = finish_run(["runs/toy"], out_dir="runs/toy")
```
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from statebound.bench.executors import make_executor
from statebound.bench.export import export_run
from statebound.bench.models import ModelSpec
from statebound.bench.plan import RunConfig, TaskSelection, select_tasks
from statebound.bench.registry import load_benchmark
from statebound.bench.report import Report, build_report, load_runs, on_shared_tasks, write_report
from statebound.bench.runner import RunOutcome, run_episodes
from statebound.bench.store import RunStore
from statebound.bench.types import Benchmark, EpisodeLimits
from statebound.errors import DefinitionError

__all__ = ["Execution", "execute_run", "finish_run", "prepare_run"]


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
) -> tuple[RunConfig, Benchmark]:
    """Load the benchmark, select its tasks and fix the run's configuration."""
    if not agents or not models:
        raise DefinitionError("give at least one --agent and one --model")
    options = dict(benchmark_options or {})
    benchmark = load_benchmark(benchmark_name, **options)
    tasks = select_tasks(benchmark.tasks(), selection or TaskSelection())
    config = RunConfig(
        benchmark=benchmark_name,
        benchmark_options=options,
        agents=tuple(agents),
        models=tuple(m if isinstance(m, ModelSpec) else ModelSpec(m) for m in models),
        seeds=tuple(int(s) for s in seeds) or (0,),
        task_ids=tuple(task.id for task in tasks),
        limits=limits or EpisodeLimits(),
    )
    return config, benchmark


async def execute_run(
    config: RunConfig,
    *,
    out_dir: str | Path,
    benchmark: Benchmark | None = None,
    execution: Execution = Execution(),
) -> RunOutcome:
    """Run every episode of ``config`` missing from ``out_dir``'s store."""
    benchmark = benchmark or load_benchmark(config.benchmark, **config.benchmark_options)
    by_id = {task.id: task for task in benchmark.tasks()}
    missing = [task_id for task_id in config.task_ids if task_id not in by_id]
    if missing:
        raise DefinitionError(f"{config.benchmark} no longer has tasks {missing[:5]}")
    executor = make_executor(
        execution.executor,
        benchmark_name=config.benchmark,
        benchmark_options=config.benchmark_options,
        benchmark=benchmark,
        ray_address=execution.ray_address,
        ray_num_cpus=execution.ray_num_cpus,
    )
    try:
        with RunStore(out_dir) as store:
            return await run_episodes(
                config,
                [by_id[task_id] for task_id in config.task_ids],
                agents_available=benchmark.agents(),
                store=store,
                executor=executor,
                concurrency=execution.concurrency,
                resume=execution.resume,
                retry_errors=execution.retry_errors,
                progress=execution.progress,
            )
    finally:
        await executor.aclose()


def finish_run(
    run_dirs: Sequence[str | Path],
    *,
    out_dir: str | Path,
    breakdown_keys: Sequence[str] | None = None,
    bin_width: int | None = None,
    plots: bool = True,
    shared_tasks: bool = False,
) -> tuple[Report, list[Path]]:
    """Export each run (``results.jsonl``, trajectories), then write the report and plots to
    ``out_dir``; ``shared_tasks``: report only the tasks every run has (:func:`on_shared_tasks`)."""
    files = []
    for run_dir in run_dirs:
        with RunStore(run_dir, read_only=True) as store:
            files.append(export_run(store))
    runs = load_runs(run_dirs, with_trajectories=True)  # plots and the repeated-replies table
    if shared_tasks:
        runs = on_shared_tasks(runs)
    report = build_report(runs, breakdown_keys=breakdown_keys)
    files += write_report(report, out_dir)
    drawn: list[Path] = []
    if plots:
        from statebound.bench.plots import write_plots

        results = [r for run in runs for r in run.results]
        drawn = write_plots(results, report.main, keys=report.group_keys, out_dir=Path(out_dir) / "plots", bin_width=bin_width)
    from statebound.bench.html import write_html

    benchmarks = sorted({run.config.benchmark for run in runs if run.config is not None})
    labels = [run.label for run in runs]
    title = f"{', '.join(benchmarks) or 'statebound'}: " + (", ".join(labels) if len(labels) <= 3 else f"{len(labels)} runs")
    files += [*drawn, write_html(report, out_dir, title=title, plots=drawn)]
    return report, files
