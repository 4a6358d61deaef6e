"""The tracing in force: its tracer provider, and the observer that traces every flow run."""

from __future__ import annotations

import atexit
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from statebound.contract.result import EpisodeResult
from statebound.flow.listeners import EventCallback
from statebound.flow.observers import add_observer, remove_observer
from statebound.llm.base import LLM, LLMWrapper
from statebound.llm.config import LOCAL_PLACEHOLDER_KEY
from statebound.llm.secrets import Secret
from statebound.telemetry.bench import episode_span, finish_episode, run_span
from statebound.telemetry.flow import FlowSpans
from statebound.telemetry.llm import traced

__all__ = ["Tracing"]


@dataclass(eq=False)
class Tracing:
    """Spans from every flow run (and, through :mod:`statebound.telemetry.bench`, every
    benchmark run) to ``provider``; ``owned``: made here, so shut down by :meth:`stop`."""

    provider: Any
    tracer: trace.Tracer
    owned: bool
    content: bool = False  # prompts, replies, tool arguments and results on the spans
    secrets: set[str] = field(default_factory=set)  # masked by value wherever content is put

    @classmethod
    def start(cls, provider: Any = None, *, content: bool = False) -> Tracing:
        owned = provider is None
        if owned:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            provider = TracerProvider(resource=Resource.create({"service.name": "statebound"}))
            provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
            atexit.register(provider.shutdown)
        tracing = cls(provider, provider.get_tracer("statebound"), owned, content)
        add_observer(tracing.observe)
        return tracing

    def observe(self, flow: str, llm: LLM | None) -> tuple[EventCallback, LLM | None]:
        """A flow run starts: its spans, and its model traced (unless it already is)."""
        return FlowSpans(self.tracer, flow, self.shown), None if llm is None else self.traced(llm)

    def traced(self, llm: LLM) -> LLM:
        """``llm`` with a span per call (its API key, if it has one, masked in their content)."""
        backend: object = llm
        while isinstance(backend, LLMWrapper):
            backend = backend.wrapped()
        key = getattr(getattr(backend, "settings", None), "api_key", None)
        if isinstance(key, Secret) and len(key.reveal()) >= 8 and key.reveal() != LOCAL_PLACEHOLDER_KEY:
            self.secrets.add(key.reveal())
        return traced(llm, self.tracer, self.shown)

    def shown(self, text: str) -> str | None:
        """``text`` as a span may hold it: None while content is off, else with the secrets masked."""
        if not self.content:
            return None
        from statebound.llm.secrets import redact

        return redact(text, *self.secrets) if self.secrets else text

    def run(self, benchmark: str, *, agents: Sequence[str], models: Sequence[str],
            episodes: int) -> AbstractContextManager[Any]:
        """The span of a benchmark run, current while its episodes run."""
        return run_span(self.tracer, benchmark, agents=agents, models=models, episodes=episodes)

    async def episode(self, benchmark: str, run: Callable[[LLM], Awaitable[EpisodeResult]], llm: LLM, *,
                      task: str, agent: str, model: str, seed: int) -> EpisodeResult:
        """``run(llm)`` (one episode) inside its span, with ``llm`` traced; the result on the span."""
        with episode_span(self.tracer, benchmark, task=task, agent=agent, model=model, seed=seed) as span:
            result = await run(self.traced(llm))
            finish_episode(span, result)
        return result

    def stop(self) -> None:
        remove_observer(self.observe)
        if self.owned:
            self.provider.shutdown()
        else:
            self.provider.force_flush()
