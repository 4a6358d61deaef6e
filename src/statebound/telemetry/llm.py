"""A span per LLM call, with the GenAI semantic conventions' attributes; with content on, the
prompt and the replies (or, for a scoring request, each text and its log-probabilities)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from opentelemetry import trace

from statebound.llm.base import LLM, Completion, LLMWrapper, Request
from statebound.telemetry import attributes as a

__all__ = ["Shown", "TracedLLM", "traced"]

Shown = Callable[[str], "str | None"]  # content as a span may hold it (secrets masked), or None: none


def _hidden(text: str) -> str | None:
    return None


@dataclass
class TracedLLM(LLMWrapper):
    """``inner`` with each call a child span of the current one (a state's, in a flow run)."""

    inner: LLM
    tracer: trace.Tracer
    provider: str = ""  # the backend's class, as gen_ai.provider.name
    shown: Shown = _hidden

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
            asked = self.shown(_input(request))
            if asked is not None:
                span.set_attributes({a.INPUT_MESSAGES: asked, a.INPUT_VALUE: asked})
            completion = await self.inner.complete(request)
            span.set_attributes({
                a.RESPONSE_MODEL: completion.model,
                a.INPUT_TOKENS: completion.usage.prompt_tokens,
                a.OUTPUT_TOKENS: completion.usage.completion_tokens,
                a.FINISH_REASONS: [choice.finish_reason for choice in completion.choices],
            })
            answered = self.shown(_output(request, completion))
            if answered is not None:
                span.set_attributes({a.OUTPUT_MESSAGES: answered, a.OUTPUT_VALUE: answered})
            return completion


def _input(request: Request) -> str:
    """The prompt as the conventions' message list (JSON): a text prompt as one user message."""
    messages = request.messages or ()
    listed = [{"role": m.role, "parts": [{"type": "text", "content": m.content}]} for m in messages] or [
        {"role": "user", "parts": [{"type": "text", "content": request.prompt or ""}]}]
    return json.dumps(listed, ensure_ascii=False)


def _output(request: Request, completion: Completion) -> str:
    """The replies (JSON); for a scoring request each text with its tokens' log-probabilities."""
    if request.score is not None:
        return json.dumps([{"text": c.text, "logprobs": [t.logprob for t in c.logprobs or ()]}
                           for c in completion.choices], ensure_ascii=False)
    return json.dumps([{"role": "assistant", "finish_reason": c.finish_reason,
                        "parts": [{"type": "text", "content": c.text},
                                  *({"type": "tool_call", "name": t.name, "arguments": t.arguments}
                                    for t in c.tool_calls)]}
                       for c in completion.choices], ensure_ascii=False)


def traced(llm: LLM, tracer: trace.Tracer, shown: Shown = _hidden) -> LLM:
    """``llm`` wrapped in a :class:`TracedLLM`, unless some wrapper in it already is one."""
    inner: object = llm
    while isinstance(inner, LLMWrapper):
        if isinstance(inner, TracedLLM):
            return llm
        inner = inner.wrapped()
    return TracedLLM(llm, tracer, shown=shown)
