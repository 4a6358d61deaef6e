"""The contract between the harness and a benchmark, and between a benchmark and its agents.

A benchmark is declared, not programmed around the harness: its options (a frozen pydantic model,
parsed once from ``-O key=value``), its tasks, how to make one episode's environment, how to grade
an episode, and (by entry point, see :mod:`statebound.bench.registry`) the agents that can run on
it. An agent is a value that runs one episode: ``await agent(task_text, llm=..., env=...)``
returns a :class:`~statebound.contract.trace.Trace`. The harness owns the episode: it makes the
environment, resets it, runs the agent under the limits, grades, closes and stores
(:mod:`statebound.bench.episode`).

```python
class Options(BenchmarkOptions):
    count: int = 20

class Arithmetic(Benchmark[Options, Sums]):  # Sums: its environment, what make_env returns and grade gets
    name = "arithmetic"
    summary = "sums graded exactly"
    Options = Options

    def tasks(self): ...
    def make_env(self, *, max_turns, **settings): ...
    def grade(self, env, task, trace): ...
```
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypeVar

from statebound.contract.trace import Trace
from statebound.envs.base import Environment
from statebound.flow.choosers import ChoiceMethod
from statebound.llm.base import LLM

__all__ = [
    "Agent",
    "AgentSpec",
    "Benchmark",
    "BenchmarkOptions",
    "ChoiceOptions",
    "EpisodeLimits",
    "FormatOptions",
    "Grade",
    "ModelNeed",
    "Reference",
    "Setup",
    "Task",
]

ModelNeed = Literal["grammar", "scoring"]


@dataclass(frozen=True, slots=True)
class Task:
    """One benchmark task. ``meta`` carries breakdown keys such as ``hardness`` or ``task_type``."""

    id: str
    question: str
    meta: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class EpisodeLimits:
    """The limits every benchmark reads alike (docs/harness.md, "Limits").

    ``max_turns``: actions the agent may send to its environment (``None``: the benchmark's own
    default); ``max_tokens``: prompt and completion tokens of the episode's model calls;
    ``timeout_s``: wall-clock seconds."""

    max_turns: int | None = None
    max_tokens: int | None = None
    timeout_s: float | None = None


@dataclass(frozen=True, slots=True)
class Reference:
    """What a task counts as solved, for readers of an episode (``statebound show``, ``view``):
    ``gold`` is the task's gold (query, command, answer) and ``expected`` what it gives when run
    again on a fresh environment (``None`` when that is not made again, e.g. it needs a sandbox)."""

    gold: str
    expected: str | None = None


class BenchmarkOptions(BaseModel):
    """Base of a benchmark's options: frozen, unknown keys are an error, and so is a number that is
    not finite (each size declares its own bounds)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class FormatOptions(BenchmarkOptions):
    """Options of a benchmark whose agents can hold every model reply to their shape with a GBNF
    grammar (``-O format=grammar``, llama.cpp models)."""

    format: Literal["free", "grammar"] = Field("free", description="grammar: replies held to the agent's shape")


class ChoiceOptions(BenchmarkOptions):
    """Options of a benchmark whose scoped agents pick among candidates (``-O choice=``): how they
    choose (:mod:`statebound.flow.choosers`)."""

    choice: ChoiceMethod = Field(
        "auto", description="how scoped agents choose: auto (the best the model can run: score, then "
        "label, then grammar), score, label, grammar, or random (the control)")


OptionsT = TypeVar("OptionsT", bound=BenchmarkOptions)
EnvT = TypeVar("EnvT", bound=Environment, default=Environment)  # the environment its episodes run in


@dataclass(frozen=True, slots=True, kw_only=True)
class Setup(Generic[OptionsT]):
    """What an agent factory gets for one episode."""

    options: OptionsT
    task: Task
    seed: int
    max_turns: int | None  # resolved: the run's limit or the benchmark's default


class Agent(Protocol):
    """Runs one episode on ``task`` (the text the environment's reset returned)."""

    async def __call__(self, task: str, *, llm: LLM, env: Any) -> Trace: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentSpec(Generic[OptionsT]):
    """An agent as a benchmark offers it.

    ``build`` makes the agent for one episode; ``uses_model=False`` marks model-free agents
    (oracles, replays), which need no model feature; ``needs`` names the model features it always
    needs; ``chooses`` marks agents that pick among candidates with the chooser ``-O choice=``
    names (:class:`ChoiceOptions`; ``chat_choices``: their choice prompts are chat messages), so
    the harness checks the model can run it; ``env`` are settings passed to the benchmark's ``make_env`` for its episodes (e.g. a
    game that lists its admissible commands); ``check`` raises a
    :class:`~statebound.errors.DefinitionError` when the options do not suit the agent (checked
    before a run stores anything); ``tasks`` gives the ids of the only tasks it can run under the
    options (a replay: its file's), which a run of it selects when no task ids are given."""

    build: Callable[[Setup[OptionsT]], Agent]
    summary: str
    uses_model: bool = True
    needs: frozenset[ModelNeed] = frozenset()
    chooses: bool = False
    chat_choices: bool = True
    env: Mapping[str, Any] = field(default_factory=dict)
    check: Callable[[OptionsT], None] | None = None
    tasks: Callable[[OptionsT], Collection[str]] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Grade:
    """How an episode went, in the benchmark's terms: ``turns`` are the actions taken, and
    ``error_rate`` the share of them that failed; ``meta`` is kept with the result (breakdown keys,
    reward parts, counts)."""

    reward: float
    success: bool
    turns: int
    error_rate: float = 0.0
    meta: Mapping[str, Any] = field(default_factory=dict)


class Benchmark(ABC, Generic[OptionsT, EnvT]):
    """A benchmark: tasks, one environment per episode, grading. Built from its parsed options.

    Subclasses set ``name``, ``summary``, ``Options`` (their :class:`BenchmarkOptions`) and,
    where they differ from the defaults, ``default_max_turns``, ``report_columns`` (extra report
    columns, :class:`~statebound.contract.columns.MetaColumn`), ``breakdown_order`` (the order of a
    task meta key's values in report breakdowns; others follow as first seen) and
    ``renamed_options``."""

    name: ClassVar[str]
    summary: ClassVar[str]
    Options: ClassVar[type[BenchmarkOptions]]
    default_max_turns: ClassVar[int | None] = 10
    report_columns: ClassVar[tuple[Any, ...]] = ()
    breakdown_order: ClassVar[Mapping[str, tuple[str, ...]]] = {}
    renamed_options: ClassVar[Mapping[str, str]] = {}  # an old option -> what replaced it

    def __init__(self, options: OptionsT) -> None:
        self.options = options

    @abstractmethod
    def tasks(self) -> Sequence[Task]:
        """All tasks, in a stable order."""

    @abstractmethod
    def make_env(self, *, max_turns: int | None, **settings: Any) -> EnvT:
        """A fresh environment for one episode (``settings``: the agent's :attr:`AgentSpec.env`)."""

    @abstractmethod
    def grade(self, env: EnvT, task: Task, trace: Trace) -> Grade:
        """Grade the episode that just ran in ``env`` (called in a worker thread)."""

    def reference(self, task_id: str) -> Reference | None:
        """``task_id``'s gold and the result it gives (:class:`Reference`), for readers of its
        episodes; ``None`` (the default) when the benchmark keeps no gold."""
        return None

    def model_needs(self, agent: AgentSpec[OptionsT]) -> frozenset[ModelNeed]:
        """The model features ``agent`` needs under these options (a grammar for
        ``format=grammar``); the harness checks them before the first episode."""
        if not agent.uses_model:
            return frozenset()
        grammar = isinstance(self.options, FormatOptions) and self.options.format == "grammar"
        return agent.needs | {"grammar"} if grammar else agent.needs
