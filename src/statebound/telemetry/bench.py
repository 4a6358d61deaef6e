"""Benchmark spans: a run span for ``statebound eval`` with an episode span per task below it."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from opentelemetry import trace
from opentelemetry.trace import Span, Status, StatusCode

from statebound.contract.result import EpisodeResult
from statebound.telemetry import attributes as a

__all__ = ["episode_span", "finish_episode", "run_span"]


@contextmanager
def run_span(tracer: trace.Tracer, benchmark: str, *, agents: Sequence[str], models: Sequence[str],
             episodes: int) -> Iterator[Span]:
    """The current span while a benchmark run's episodes run (their tasks copy it as parent)."""
    with tracer.start_as_current_span(f"run {benchmark}", attributes={
            a.BENCHMARK: benchmark, a.AGENTS: list(agents), a.MODELS: list(models), a.EPISODES: episodes}) as span:
        yield span


@contextmanager
def episode_span(tracer: trace.Tracer, benchmark: str, *, task: str, agent: str, model: str,
                 seed: int) -> Iterator[Span]:
    """The current span while one episode runs: its flow runs and LLM calls are below it."""
    with tracer.start_as_current_span(f"episode {task} {agent}", attributes={
            a.OPERATION: "invoke_agent", a.AGENT_NAME: agent, a.BENCHMARK: benchmark, a.TASK: task,
            a.AGENT: agent, a.MODEL: model, a.REQUEST_MODEL: model, a.SEED: seed}) as span:
        yield span


def finish_episode(span: Span, result: EpisodeResult) -> None:
    """Put an episode's outcome on its span: reward, success, exit, tokens, and the error if any."""
    span.set_attributes({a.REWARD: result.reward, a.SUCCESS: result.success,
                         a.EXIT_REASON: result.exit_reason.value, a.EXIT_STATE: result.exit_state or "",
                         a.INPUT_TOKENS: result.prompt_tokens, a.OUTPUT_TOKENS: result.completion_tokens})
    if result.error is not None:
        span.set_attributes({a.ERROR: result.error})
        span.set_status(Status(StatusCode.ERROR, result.error))
