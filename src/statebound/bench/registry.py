"""Benchmarks and their agents, found by entry point; the bundled ones register the same way.

A package adds a benchmark under the entry-point group ``statebound.benchmarks`` (the name is what
``statebound eval NAME`` takes, the value a :class:`~statebound.contract.benchmark.Benchmark`
subclass) and agents under ``statebound.agents`` (the name is the benchmark's, the value a mapping
of agent names to :class:`~statebound.contract.benchmark.AgentSpec`; several packages may add agents
to one benchmark)::

    [project.entry-points."statebound.benchmarks"]
    arithmetic = "mypackage.bench:Arithmetic"
    [project.entry-points."statebound.agents"]
    arithmetic = "mypackage.bench:AGENTS"

An agent may also be named ``KIND:ARGUMENT``, where ``KIND`` is an agent kind registered under
``statebound.agent_kinds`` (the value a function ``(benchmark name, ARGUMENT) -> AgentSpec``):
``induced:machine.json`` is the machine :mod:`statebound.induce` wrote to that file::

    [project.entry-points."statebound.agent_kinds"]
    induced = "statebound.induce.agent:induced"

Nothing is imported until a benchmark is asked for by name. A benchmark or an agent may also be
named ``path.py:name``: a :class:`~statebound.contract.benchmark.Benchmark` subclass or an
:class:`~statebound.contract.benchmark.AgentSpec` defined in a Python file, no packaging
(:mod:`statebound.user_files`; ``statebound eval tickets.py:Tickets -a tickets.py:scoped``).
"""

from __future__ import annotations

import inspect
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from statebound.bench.options import parse_options
from statebound.contract.benchmark import AgentSpec, Benchmark, BenchmarkOptions, Task
from statebound.contract.columns import MetaColumn
from statebound.errors import DefinitionError, did_you_mean
from statebound.user_files import call, file_of, is_file_ref, load_ref

__all__ = [
    "AGENT_GROUP",
    "AGENT_KIND_GROUP",
    "BENCHMARK_GROUP",
    "LoadedBenchmark",
    "benchmark_class",
    "agent_kind_summary",
    "agent_kinds",
    "benchmark_names",
    "did_you_mean",
    "load_agents",
    "load_benchmark",
]

BENCHMARK_GROUP = "statebound.benchmarks"
AGENT_GROUP = "statebound.agents"
AGENT_KIND_GROUP = "statebound.agent_kinds"


@cache
def _entry_points(group: str) -> tuple[EntryPoint, ...]:
    return tuple(entry_points(group=group))


def _load(point: EntryPoint) -> Any:
    try:
        return point.load()
    except (ImportError, AttributeError) as exc:
        where = f" (package {point.dist.name})" if point.dist is not None else ""
        raise DefinitionError(f"cannot load {point.group} entry point {point.name}={point.value}{where}: {exc}") from exc


def agent_kinds() -> list[str]:
    """Every registered agent kind (``induced`` for ``-a induced:PATH``), sorted."""
    return sorted({point.name for point in _entry_points(AGENT_KIND_GROUP)})


def agent_kind_summary(kind: str) -> str:
    """The first line of the docstring of the function that makes agent kind ``kind``."""
    point = next(point for point in _entry_points(AGENT_KIND_GROUP) if point.name == kind)
    return ((_load(point).__doc__ or "").strip().splitlines() or [""])[0]


def _kind_agent(benchmark: str, name: str) -> AgentSpec[Any] | None:
    """The agent ``KIND:ARGUMENT`` names when ``KIND`` is a registered agent kind, else None."""
    kind, colon, argument = name.partition(":")
    points = [point for point in _entry_points(AGENT_KIND_GROUP) if point.name == kind] if colon else []
    if not points:
        return None
    spec = _load(points[0])(benchmark, argument)
    if not isinstance(spec, AgentSpec):
        raise DefinitionError(f"agent kind {kind} ({points[0].value}) made a {type(spec).__name__}, not an AgentSpec")
    return spec


def benchmark_names() -> list[str]:
    """Every registered benchmark, sorted."""
    return sorted({point.name for point in _entry_points(BENCHMARK_GROUP)})


def benchmark_class(name: str) -> type[Benchmark[Any]]:
    """The benchmark registered as ``name``, or defined at ``path.py:name``."""
    if is_file_ref(name):
        found = load_ref(name, "a Benchmark subclass", fits=lambda value: isinstance(value, type)
                         and issubclass(value, Benchmark) and value is not Benchmark)
        if not (isinstance(found, type) and issubclass(found, Benchmark)):
            raise DefinitionError(f"{name} is a {type(found).__name__}, not a Benchmark subclass")
        return _complete(name, found)
    points = [point for point in _entry_points(BENCHMARK_GROUP) if point.name == name]
    if not points:
        known = benchmark_names()
        raise DefinitionError(f"unknown benchmark {name!r}.{did_you_mean(name, known)} Registered: {', '.join(known)}")
    if len(points) > 1:
        owners = ", ".join(sorted(p.dist.name if p.dist else p.value for p in points))
        raise DefinitionError(f"benchmark {name!r} is registered more than once ({owners}); uninstall one")
    found = _load(points[0])
    if not (isinstance(found, type) and issubclass(found, Benchmark)):
        raise DefinitionError(f"entry point {name}={points[0].value} is not a Benchmark subclass")
    return _complete(name, found)


def _defined_at(name: str, cls: type) -> str:
    """``file:line: name`` where a user's file defines ``cls`` (else ``name``)."""
    if not is_file_ref(name):
        return name
    try:
        line = inspect.getsourcelines(cls)[1]
    except (OSError, TypeError):
        return name
    return f"{file_of(name).resolve()}:{line}: {name}"


def _complete(name: str, cls: type[Benchmark[Any]]) -> type[Benchmark[Any]]:
    """``cls``, refused when it leaves out what every benchmark defines."""
    missing = sorted(getattr(cls, "__abstractmethods__", ()))
    missing += [attribute for attribute in ("name", "summary", "Options") if not hasattr(cls, attribute)]
    if missing:
        raise DefinitionError(f"{_defined_at(name, cls)} is an incomplete Benchmark: it does not define "
                              f"{', '.join(missing)} (a benchmark defines name, summary, Options, tasks, make_env and grade)")
    if not (isinstance(cls.Options, type) and issubclass(cls.Options, BenchmarkOptions)):
        raise DefinitionError(f"{name}.Options is not a BenchmarkOptions subclass")
    if not all(isinstance(column, MetaColumn) for column in cls.report_columns):
        raise DefinitionError(f"{name}.report_columns must be a tuple of MetaColumn")
    return cls


@cache
def load_agents(benchmark: str) -> Mapping[str, AgentSpec[Any]]:
    """Every agent registered for ``benchmark``, in registration order."""
    agents: dict[str, AgentSpec[Any]] = {}
    owner: dict[str, str] = {}
    for point in _entry_points(AGENT_GROUP):
        if point.name != benchmark:
            continue
        table = _load(point)
        if not isinstance(table, Mapping) or not all(isinstance(spec, AgentSpec) for spec in table.values()):
            raise DefinitionError(f"entry point {point.name}={point.value} must be a mapping of names to AgentSpec")
        for name, spec in table.items():
            if name in agents:
                raise DefinitionError(f"{benchmark} agent {name!r} is registered twice ({owner[name]} and {point.value})")
            agents[name], owner[name] = spec, point.value
    return agents


@dataclass(frozen=True, slots=True)
class LoadedBenchmark:
    """A benchmark built from its options, with the agents registered for it; ``ref`` is the name
    it was loaded by (registered, or ``path.py:name``)."""

    benchmark: Benchmark[Any]
    agents: Mapping[str, AgentSpec[Any]]
    ref: str = ""
    _listed: list[tuple[Task, ...]] = field(default_factory=list, repr=False, compare=False)

    @property
    def name(self) -> str:
        return self.benchmark.name

    def tasks(self) -> tuple[Task, ...]:
        """The benchmark's tasks, listed once: what ``tasks()`` raises is one line naming the file
        and line, and two tasks with one id are refused (one of them would never be stored)."""
        if not self._listed:
            tasks = tuple(call(self.ref or self.name, "listing its tasks", self.benchmark.tasks))
            repeated = [task_id for task_id, count in Counter(task.id for task in tasks).items() if count > 1]
            if repeated:
                shown = ", ".join(repr(task_id) for task_id in repeated[:5]) + (", ..." if len(repeated) > 5 else "")
                raise DefinitionError(f"{self.ref or self.name} lists {len(repeated)} task id{'s' if len(repeated) > 1 else ''} "
                                      f"more than once ({shown}): each task needs an id of its own")
            self._listed.append(tasks)
        return self._listed[0]

    def agent(self, name: str) -> AgentSpec[Any]:
        """The agent ``name`` (registered, an ``AgentSpec`` at ``path.py:name``, or one of a
        registered kind, ``KIND:ARGUMENT``), or an error listing the benchmark's agents."""
        if is_file_ref(name) and name not in self.agents:
            found = load_ref(name, "an AgentSpec", fits=lambda value: isinstance(value, AgentSpec))
            if not isinstance(found, AgentSpec):
                raise DefinitionError(f"{name} is a {type(found).__name__}, not an AgentSpec")
            return found
        if name not in self.agents and (kind := _kind_agent(self.name, name)) is not None:
            return kind
        if name not in self.agents:
            kinds = "".join(f", {kind}:..." for kind in agent_kinds())
            raise DefinitionError(
                f"{self.name} has no agent {name!r}.{did_you_mean(name, self.agents)} "
                f"Its agents: {', '.join(self.agents)}{kinds}"
            )
        return self.agents[name]


def load_benchmark(name: str, options: Mapping[str, Any] | None = None) -> LoadedBenchmark:
    """Build the benchmark registered as ``name`` from raw ``options`` (``-O key=value`` pairs)."""
    cls = benchmark_class(name)
    raw = dict(options or {})
    for old in raw.keys() & cls.renamed_options.keys():
        raise DefinitionError(f"{name} option {old} is now {cls.renamed_options[old]} (e.g. {cls.renamed_options[old]} {raw[old]})")
    parsed = parse_options(cls.Options, raw, owner=name)
    return LoadedBenchmark(call(name, "building the benchmark from its options", cls, parsed), load_agents(name), name)
