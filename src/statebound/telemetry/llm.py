"""A span per LLM call, with the GenAI semantic conventions' attributes."""

from __future__ import annotations

from dataclasses import dataclass

from opentelemetry import trace

from statebound.llm.base import LLM, Completion, LLMWrapper, Request
from statebound.telemetry import attributes as a

__all__ = ["TracedLLM", "traced"]


@dataclass
class TracedLLM(LLMWrapper):
    """``inner`` with each call a child span of the current one (a state's, in a flow run)."""

    inner: LLM
    tracer: trace.Tracer
    provider: str = ""  # the backend's class, as gen_ai.provider.name

    def __post_init__(self) -> None:
        backend: object = self.inner
        while isinstance(backend, LLMWrapper):
            backend = backend.wrapped()
        self.provider = self.provider or type(backend).__name__

    def wrapped(self) -> LLM:
        return self.inner

    async def complete(self, request: Request) -> Completion:
        operation = "chat" if request.messages is not None else "text_completion"
        model = self.inner.model
        with self.tracer.start_as_current_span(f"{operation} {model}", kind=trace.SpanKind.CLIENT) as span:
            span.set_attributes({a.OPERATION: operation, a.REQUEST_MODEL: model, a.PROVIDER: self.provider,
                                 a.SYSTEM: self.provider, a.MAX_TOKENS: request.max_tokens,
                                 a.TEMPERATURE: request.temperature})
            completion = await self.inner.complete(request)
            span.set_attributes({
                a.RESPONSE_MODEL: completion.model,
                a.INPUT_TOKENS: completion.usage.prompt_tokens,
                a.OUTPUT_TOKENS: completion.usage.completion_tokens,
                a.FINISH_REASONS: [choice.finish_reason for choice in completion.choices],
            })
            return completion


def traced(llm: LLM, tracer: trace.Tracer) -> LLM:
    """``llm`` wrapped in a :class:`TracedLLM`, unless some wrapper in it already is one."""
    inner: object = llm
    while isinstance(inner, LLMWrapper):
        if isinstance(inner, TracedLLM):
            return llm
        inner = inner.wrapped()
    return TracedLLM(llm, tracer)
