"""The one episode runner: environment lifecycle, limits, grading, and the stored result built once.

For each episode the harness makes the benchmark's environment, resets it on the task, builds the
agent and runs it with a metered model (which enforces the token limit), grades the episode and
closes the environment, all under the wall-clock limit. The agent gets the environment behind a
recorder (:mod:`statebound.bench.steps`), so every episode keeps the actions sent with what the
environment offered before each, whatever the agent. A crash becomes an
:class:`~statebound.contract.result.EpisodeResult` carrying the error, so one broken episode is
recorded instead of killing the run. Errors that every episode would meet alike stop the run
instead (:data:`RUN_STOPPING`): a mistake in the run's configuration (a model without a feature
an agent needs, see :func:`check_agent`) and a provider that refuses every request
(:class:`~statebound.errors.FatalProviderError`: a bad key, an unknown model, a server that cannot
be reached), even when the agent caught it.
"""

from __future__ import annotations

import asyncio
import time
import traceback
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from statebound.bench.steps import StepRecorder
from statebound.contract.benchmark import AgentSpec, Benchmark, EpisodeLimits, Grade, Setup, Task
from statebound.contract.result import EpisodeResult
from statebound.contract.trace import Trace
from statebound.errors import (
    BudgetExceeded,
    DefinitionError,
    FatalProviderError,
    ModelUnavailable,
    UnsupportedFeature,
)
from statebound.exits import ExitReason
from statebound.flow.choosers import ChoiceMethod, resolve
from statebound.flow.engine import check_models
from statebound.flow.machine import Machine
from statebound.llm.base import LLM, Completion, LLMWrapper, Request
from statebound.llm.usage import UsageMeter
from statebound.telemetry import active as active_tracing

__all__ = ["RUN_STOPPING", "BudgetedLLM", "Episode", "check_agent", "run_episode"]

# Errors that stop a run instead of being recorded as a crashed episode: every episode would fail alike.
RUN_STOPPING = (UnsupportedFeature, ModelUnavailable, FatalProviderError)


@dataclass
class BudgetedLLM(LLMWrapper):
    """Meters one episode's calls (usage and cost) and raises :class:`BudgetExceeded` once
    ``max_tokens`` have been used: the one place an episode's usage is counted. It keeps the
    :class:`FatalProviderError` a call raised (``fatal``), so the run stops even if the agent
    caught it."""

    inner: LLM
    max_tokens: int | None = None
    meter: UsageMeter = field(default_factory=UsageMeter)
    fatal: FatalProviderError | None = None

    def wrapped(self) -> LLM:
        return self.inner

    async def complete(self, request: Request) -> Completion:
        if self.max_tokens is not None and self.meter.total.total_tokens >= self.max_tokens:
            raise BudgetExceeded(f"episode token limit {self.max_tokens} reached")
        try:
            completion = await self.inner.complete(request)
        except FatalProviderError as error:
            self.fatal = error
            raise
        self.meter.add(completion)
        return completion


@dataclass(frozen=True, slots=True, kw_only=True)
class Episode:
    """One episode to run: which task, agent, model (by the name results show) and seed."""

    task: Task
    agent: str
    model: str
    seed: int = 0


def check_agent(benchmark: Benchmark[Any], name: str, spec: AgentSpec[Any], llm: LLM) -> None:
    """Raise :class:`UnsupportedFeature` when ``llm`` lacks a feature agent ``name`` needs (its
    chooser among them)."""
    capabilities = llm.capabilities
    if spec.chooses and spec.uses_model:
        method: ChoiceMethod = getattr(benchmark.options, "choice", "auto")
        try:
            resolve(method, capabilities, chat=spec.chat_choices, model=repr(llm.model), spelled="-O choice=")
        except UnsupportedFeature as error:
            raise UnsupportedFeature(f"{benchmark.name} agent {name}: {error}") from None
    elif spec.uses_model and (flow := _flow_of(benchmark, spec)) is not None:
        try:  # an agent of the user's own: what its flow's Picks and llm_choice transitions need
            check_models(flow, llm)
        except UnsupportedFeature as error:
            raise UnsupportedFeature(f"{benchmark.name} agent {name}: {error}") from None
    for need in sorted(benchmark.model_needs(spec)):
        if not getattr(capabilities, need):
            why = {"grammar": "accepts GBNF grammars", "scoring": "scores given text (log-probabilities)"}[need]
            server = ("a llama.cpp server or vLLM (their profiles send grammars; --model-option grammar_field=grammar "
                      "names the field for another; statebound models --probe URL says what a server takes)"
                      if need == "grammar" else
                      "a server that scores text (llama.cpp's servers, vLLM: statebound models --probe URL)")
            raise UnsupportedFeature(
                f"{benchmark.name} agent {name} needs a model whose backend {why}; {llm.model!r} does not. "
                f"Use a llama.cpp model (e.g. --model smollm2, gguf:PATH), {server}, "
                f"or another agent{' or -O format=free' if need == 'grammar' else ''} (docs/models.md)"
            )


def _flow_of(benchmark: Benchmark[Any], spec: AgentSpec[Any]) -> Machine | None:
    """The flow an agent runs, when it is a flow (``FlowAgent``), built for the first task; None
    for other agents, and for one that cannot be built so (its episodes will say why)."""
    tasks = benchmark.tasks()
    if not tasks:
        return None
    try:
        agent = spec.build(Setup(options=benchmark.options, task=tasks[0], seed=0,
                                 max_turns=benchmark.default_max_turns))
    except (DefinitionError, KeyError, LookupError, TypeError, ValueError):
        return None
    flow = getattr(agent, "flow", None)
    return flow if isinstance(flow, Machine) else None


async def run_episode(
    benchmark: Benchmark[Any],
    agents: Mapping[str, AgentSpec[Any]],
    episode: Episode,
    *,
    llm: LLM,
    limits: EpisodeLimits,
) -> EpisodeResult:
    """Run ``episode``; always returns a result (a crashed episode carries ``error``). While
    tracing is on (:mod:`statebound.telemetry`) it runs inside an episode span."""
    play = partial(_play, benchmark, agents, episode, limits)
    tracing = active_tracing()
    if tracing is None:
        return await play(llm)
    return await tracing.episode(benchmark.name, play, llm, task=episode.task.id, agent=episode.agent,
                                 model=episode.model, seed=episode.seed)


async def _play(benchmark: Benchmark[Any], agents: Mapping[str, AgentSpec[Any]], episode: Episode,
                limits: EpisodeLimits, llm: LLM) -> EpisodeResult:
    spec = agents[episode.agent]
    check_agent(benchmark, episode.agent, spec, llm)
    max_turns = limits.max_turns if limits.max_turns is not None else benchmark.default_max_turns
    metered = BudgetedLLM(llm, max_tokens=limits.max_tokens)
    started = time.perf_counter()
    trace: Trace | None = None
    grade: Grade | None = None
    exit_reason, error, meta = ExitReason.CRASHED, None, dict(episode.task.meta)
    text: str | None = None
    recorder: StepRecorder | None = None
    try:
        async with asyncio.timeout(limits.timeout_s):
            env = await asyncio.to_thread(lambda: benchmark.make_env(max_turns=max_turns, **spec.env))
            try:
                text = await asyncio.to_thread(env.reset, episode.task.id)
                agent = spec.build(Setup(options=benchmark.options, task=episode.task, seed=episode.seed,
                                         max_turns=max_turns))
                recorder = StepRecorder(env)
                trace = await agent(text, llm=metered, env=recorder)
                grade = await asyncio.to_thread(benchmark.grade, env, episode.task, trace)
            finally:
                await asyncio.to_thread(env.close)
        exit_reason, error = trace.exit, trace.error
    except (TimeoutError, BudgetExceeded) as exc:
        exit_reason = ExitReason.TIME_LIMIT if isinstance(exc, TimeoutError) else ExitReason.TOKEN_LIMIT
        trace = grade = None
    except RUN_STOPPING:
        raise  # every episode would fail alike, so stop the run
    except Exception as exc:  # noqa: BLE001 - a crashed episode is data, not a reason to stop the run
        error = f"{type(exc).__name__}: {exc}"
        meta["traceback"] = traceback.format_exc(limit=8)
        trace = grade = None
    if metered.fatal is not None:  # the agent caught it, but the provider refuses every request
        raise metered.fatal
    used = metered.meter.total
    if trace is not None and grade is not None:
        meta.update(trace.meta)
        meta.update(grade.meta)
    if llm.model != episode.model:  # the backend's own name for the model, when it differs
        meta["llm_model"] = llm.model
    return EpisodeResult(
        task=episode.task.id, agent=episode.agent, model=episode.model, seed=episode.seed,
        reward=grade.reward if grade else 0.0, success=grade.success if grade else False,
        turns=grade.turns if grade else 0, error_rate=grade.error_rate if grade else 0.0,
        prompt_tokens=used.prompt_tokens, completion_tokens=used.completion_tokens, llm_calls=used.calls,
        cost_usd=metered.meter.known_cost,
        exit_state=trace.exit_state if trace else None, exit_reason=exit_reason,
        wall_seconds=time.perf_counter() - started, error=error, meta=meta,
        trajectory=trace.to_dicts() if trace else [],
        events=[dict(event) for event in trace.events] if trace else [],
        task_text=text, env_steps=[step.to_dict() for step in recorder.steps] if recorder else [],
    )
