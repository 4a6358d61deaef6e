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

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from statebound.bench.options import parse_options
from statebound.contract.benchmark import AgentSpec, Benchmark
from statebound.errors import DefinitionError
from statebound.user_files import is_file_ref, load_ref

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


def did_you_mean(name: str, known: Any) -> str:
    """`` Did you mean 'x'?`` when ``name`` is close to one of ``known``, else ``""``."""
    close = difflib.get_close_matches(name, list(known), n=1)
    return f" Did you mean {close[0]!r}?" if close else ""


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
        found = load_ref(name, "a Benchmark subclass")
        if not (isinstance(found, type) and issubclass(found, Benchmark)):
            raise DefinitionError(f"{name} is a {type(found).__name__}, not a Benchmark subclass")
        return found
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
    return found


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
    """A benchmark built from its options, with the agents registered for it."""

    benchmark: Benchmark[Any]
    agents: Mapping[str, AgentSpec[Any]]

    @property
    def name(self) -> str:
        return self.benchmark.name

    def agent(self, name: str) -> AgentSpec[Any]:
        """The agent ``name`` (registered, an ``AgentSpec`` at ``path.py:name``, or one of a
        registered kind, ``KIND:ARGUMENT``), or an error listing the benchmark's agents."""
        if is_file_ref(name) and name not in self.agents:
            found = load_ref(name, "an AgentSpec")
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
    return LoadedBenchmark(cls(parsed), load_agents(name))
