"""The contract between benchmarks, agents and the harness, below all three: what a benchmark
declares (:mod:`~statebound.contract.benchmark`: its options, tasks, environments and grading, its
agents as :class:`AgentSpec`, an episode's :class:`Setup`), what an agent returns (a
:class:`Trace`, :mod:`~statebound.contract.trace`; :mod:`~statebound.contract.converters` makes one
from a flow, a monitor or a chain-of-states run), what an episode's stored result is
(:class:`EpisodeResult`, :mod:`~statebound.contract.result`) and the extra report columns a
benchmark declares (:mod:`~statebound.contract.columns`). Agents import this package, never the
harness (:mod:`statebound.bench`); tests/test_layers.py checks the order of all packages.
"""

from __future__ import annotations

from statebound.contract.benchmark import (
    Agent,
    AgentSpec,
    Benchmark,
    BenchmarkOptions,
    EpisodeLimits,
    Grade,
    Setup,
    Task,
)
from statebound.contract.result import EpisodeResult
from statebound.contract.trace import ExitReason, Trace, TraceEntry

__all__ = ["Agent", "AgentSpec", "Benchmark", "BenchmarkOptions", "EpisodeLimits", "EpisodeResult", "ExitReason",
           "Grade", "Setup", "Task", "Trace", "TraceEntry"]
