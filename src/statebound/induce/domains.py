"""What induction needs to know of a benchmark beyond its stores: the task's slots and how to read
them from the task text, how an action is written when offered, the model's system prompt, the
settings its environment needs to list the actions it accepts, and its hand-written machine with
that machine's random control (to run beside an induced one). A benchmark without an entry here
is read generically: no task slots, actions as written, the task type from the tasks' ``task_type``
(else one type for all)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Domain", "benchmark_name", "domain_for", "register_domain"]


def _no_slots(task_text: str) -> Mapping[str, str]:
    return {}


def _no_type(task_text: str) -> str | None:
    return None


@dataclass(frozen=True, slots=True)
class Domain:
    """A benchmark as induction reads it (module docstring)."""

    benchmark: str
    slots: Sequence[str] = ()
    slot_values: Callable[[str], Mapping[str, str]] = _no_slots
    task_type: Callable[[str], str | None] = _no_type
    canonical: Callable[[str], str] = str.strip
    system: str | None = None
    env: Mapping[str, Any] = field(default_factory=dict)
    hand_written: tuple[str, str] | None = None


def _alfworld() -> Domain:
    from statebound.agents.alfworld.phases import SYSTEM
    from statebound.envs.alfworld.commands import legacy_command
    from statebound.envs.alfworld.goals import parse_goal

    def slot_values(task_text: str) -> Mapping[str, str]:
        goal = parse_goal(task_text)
        return {"object": goal.obj, "receptacle": goal.receptacle or ""}

    return Domain("alfworld", slots=("object", "receptacle"), slot_values=slot_values,
                  task_type=lambda text: parse_goal(text).task_type, canonical=legacy_command, system=SYSTEM,
                  env={"admissible": True}, hand_written=("stateflow-scoped", "stateflow-scoped-random"))


_KNOWN: dict[str, Callable[[], Domain]] = {"alfworld": _alfworld}
_REGISTERED: dict[str, Domain] = {}


def register_domain(domain: Domain) -> None:
    """Teach induction about a benchmark of your own (its task slots, task types...)."""
    _REGISTERED[domain.benchmark] = domain


def benchmark_name(benchmark: str) -> str:
    """The name ``benchmark`` is registered under (its class's own for ``path.py:Class``)."""
    from statebound.bench.registry import benchmark_class
    from statebound.user_files import is_file_ref

    return benchmark_class(benchmark).name if is_file_ref(benchmark) else benchmark


def domain_for(benchmark: str) -> Domain:
    """The domain of ``benchmark`` (by its registered name; a generic one for benchmarks without
    an entry)."""
    benchmark = benchmark_name(benchmark)
    if benchmark not in _REGISTERED and benchmark in _KNOWN:
        _REGISTERED[benchmark] = _KNOWN[benchmark]()
    return _REGISTERED.get(benchmark) or Domain(benchmark)
