"""The benchmark harness: run agents x models x seeds over a benchmark's tasks into a resumable store.

- the contract (:mod:`statebound.contract`, below the agents; re-exported here): a declared :class:`Benchmark` (options, tasks,
  one environment per episode, grading), its agents (:class:`AgentSpec`), an agent's
  :class:`Trace` (:mod:`~statebound.contract.trace`; :mod:`~statebound.contract.converters` makes one
  from a flow, a monitor or a chain-of-states run);
- the registry (:mod:`~statebound.bench.registry`): benchmarks, agents and model backends by entry
  point;
- running: :func:`prepare_run` / :func:`execute_run` (:mod:`~statebound.bench.evaluate`; writing
  the report afterwards is :func:`statebound.report.finish.finish_run`), one episode runner (:mod:`~statebound.bench.episode`),
  the run store (:mod:`~statebound.bench.store`), local and Ray executors.

Reports, statistics and plots read stores from :mod:`statebound.report`. Heavier names load on
first use, so agents can import the contract cheaply.
"""

from __future__ import annotations

import importlib
from typing import Any

from statebound.contract import (
    Agent,
    AgentSpec,
    Benchmark,
    BenchmarkOptions,
    EpisodeLimits,
    EpisodeResult,
    ExitReason,
    Grade,
    Setup,
    Task,
    Trace,
    TraceEntry,
)

__all__ = [
    "Agent",
    "AgentSpec",
    "Benchmark",
    "BenchmarkOptions",
    "EpisodeLimits",
    "EpisodeResult",
    "Execution",
    "ExitReason",
    "Grade",
    "ModelSpec",
    "RunConfig",
    "RunStore",
    "Setup",
    "Task",
    "TaskSelection",
    "Trace",
    "TraceEntry",
    "execute_run",
    "load_benchmark",
    "prepare_run",
]

_LAZY = {
    "load_benchmark": "registry", "ModelSpec": "models", "TaskSelection": "plan", "RunConfig": "plan",
    "RunStore": "store", "Execution": "evaluate", "prepare_run": "evaluate", "execute_run": "evaluate",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f"statebound.bench.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'statebound.bench' has no attribute {name!r}")
