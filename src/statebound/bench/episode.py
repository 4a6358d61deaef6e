"""Run one episode under the harness's limits and never let it raise.

:func:`execute_episode` wraps ``Benchmark.run_episode``: it enforces the wall-clock and token limits
of :class:`~statebound.bench.types.EpisodeLimits` (the token limit through a metering wrapper around
the LLM), and turns a crash into an :class:`EpisodeResult` carrying the error, so one broken
episode is recorded instead of killing the run.
"""

from __future__ import annotations

import asyncio
import time
import traceback
from dataclasses import dataclass, field

from statebound.bench.types import Benchmark, EpisodeLimits, EpisodeResult, Task
from statebound.errors import BudgetExceeded, ModelUnavailable, UnsupportedFeature
from statebound.llm.base import LLM, Completion, LLMWrapper, Request
from statebound.llm.usage import UsageMeter

__all__ = ["BudgetedLLM", "execute_episode"]


@dataclass
class BudgetedLLM(LLMWrapper):
    """Meters one episode's calls (usage and cost) and raises :class:`BudgetExceeded` once
    ``max_tokens`` have been used."""

    inner: LLM
    max_tokens: int | None = None
    meter: UsageMeter = field(default_factory=UsageMeter)

    def wrapped(self) -> LLM:
        return self.inner

    async def complete(self, request: Request) -> Completion:
        if self.max_tokens is not None and self.meter.total.total_tokens >= self.max_tokens:
            raise BudgetExceeded(f"episode token limit {self.max_tokens} reached")
        completion = await self.inner.complete(request)
        self.meter.add(completion)
        return completion


async def execute_episode(
    benchmark: Benchmark,
    task: Task,
    *,
    agent: str,
    llm: LLM,
    model_name: str,
    seed: int,
    limits: EpisodeLimits,
) -> EpisodeResult:
    """Run ``agent`` on ``task``; always returns a result (crashes carry ``error``)."""
    metered = BudgetedLLM(llm, max_tokens=limits.max_tokens)
    started = time.perf_counter()
    fallback = EpisodeResult(task=task.id, agent=agent, model=model_name, seed=seed, meta=dict(task.meta))
    try:
        async with asyncio.timeout(limits.timeout_s):
            result = await benchmark.run_episode(task, agent, metered, seed=seed, limits=limits)
    except (TimeoutError, BudgetExceeded) as exc:
        fallback.exit_reason = "time_limit" if isinstance(exc, TimeoutError) else "token_limit"
        result = fallback
    except (UnsupportedFeature, ModelUnavailable):
        raise  # the run's configuration is wrong: every episode would fail alike, so stop the run
    except Exception as exc:  # noqa: BLE001 - a crashed episode is data, not a reason to stop the run
        fallback.error = f"{type(exc).__name__}: {exc}"
        fallback.exit_reason = "crashed"
        fallback.meta["traceback"] = traceback.format_exc(limit=8)
        result = fallback
    used = metered.meter.total
    if result.prompt_tokens == 0 and result.completion_tokens == 0:
        result.prompt_tokens, result.completion_tokens = used.prompt_tokens, used.completion_tokens
        result.llm_calls = used.calls
    if result.cost_usd == 0:
        result.cost_usd = metered.meter.cost
    if result.model != model_name:
        result.meta.setdefault("llm_model", result.model)
        result.model = model_name
    result.seed = seed
    result.wall_seconds = time.perf_counter() - started
    return result
