"""One flow run's spans, made from its events: the run, a span per state visited and, below a
state, its tool calls and picks (its LLM calls come from :mod:`statebound.telemetry.llm`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from opentelemetry import context, trace
from opentelemetry.trace import Span, Status, StatusCode

from statebound.flow.events import BudgetHit, MessageAdded, StateEntered, TransitionTaken
from statebound.flow.listeners import Event, RunFinished
from statebound.telemetry import attributes as a

__all__ = ["FlowSpans"]


class FlowSpans:
    """An event callback for one run. The state span is the current span while the state runs,
    so LLM calls made in it are its children. Tool and pick spans last from the event before
    them to their own (events come as each output ends)."""

    def __init__(self, tracer: trace.Tracer, flow: str, shown: Callable[[str], str | None] = lambda text: None) -> None:
        self.tracer = tracer
        self.shown = shown  # content as a span may hold it, or None while content is off
        self.run = tracer.start_span(f"invoke_agent {flow}", attributes={
            a.OPERATION: "invoke_agent", a.AGENT_NAME: flow, a.FLOW: flow})
        self.state: Span | None = None
        self.token: object | None = None
        self.mark = time.time_ns()

    def __call__(self, event: Event) -> None:
        if isinstance(event, StateEntered):
            self._leave()
            self.state = self.tracer.start_span(
                f"state {event.state}", context=trace.set_span_in_context(self.run),
                attributes={a.STATE: event.state, a.VISIT: event.visit, a.TURN: event.turn})
            self.token = context.attach(trace.set_span_in_context(self.state))
        elif isinstance(event, MessageAdded):
            entry = event.entry
            choice = entry.data.get("choice") if isinstance(entry.data, dict) else None
            if isinstance(choice, Mapping):
                self._child(f"choose {choice.get('name') or entry.state}", a.choice_attributes(choice))
            elif entry.source == "tool":
                name = entry.name or "tool"
                self._child(f"execute_tool {name}", {**a.tool_attributes(name, bool(entry.ok), entry.data),
                                                     **self._tool_content(entry.data, entry.content)},
                            error=entry.ok is False)
        elif isinstance(event, TransitionTaken):
            if event.choice:
                self._child(f"choose {event.source}", a.choice_attributes(event.choice))
            if self.state is not None:
                self.state.set_attributes({a.TARGET: event.target, a.REASON: event.reason})
            self._leave()
        elif isinstance(event, BudgetHit):
            (self.state or self.run).add_event("budget_hit", {"limit": event.limit, "state": event.state,
                                                              "used": event.used, "allowed": event.allowed})
        elif isinstance(event, RunFinished):
            self._leave()
            result = event.result
            self.run.set_attributes({a.EXIT_REASON: result.exit_reason.value, a.EXIT_STATE: result.exit_state,
                                     a.INPUT_TOKENS: result.usage.prompt_tokens,
                                     a.OUTPUT_TOKENS: result.usage.completion_tokens})
            if result.error is not None:
                self.run.set_status(Status(StatusCode.ERROR, f"{type(result.error).__name__}: {result.error}"))
            self.run.end()
        self.mark = time.time_ns()

    def _tool_content(self, data: object, result: str) -> dict[str, str]:
        """A tool call's arguments (the model's, when it called the tool) and result, when shown."""
        call = data.get("tool_call") if isinstance(data, Mapping) else None
        arguments = call.get("arguments") if isinstance(call, Mapping) else None
        found = {a.TOOL_RESULT: self.shown(result)}
        if isinstance(arguments, str):
            found[a.TOOL_ARGUMENTS] = self.shown(arguments)
        return {key: value for key, value in found.items() if value is not None}

    def _child(self, name: str, attributes: Mapping[str, Any], *, error: bool = False) -> None:
        parent = trace.set_span_in_context(self.state or self.run)
        span = self.tracer.start_span(name, context=parent, attributes=attributes, start_time=self.mark)
        if error:
            span.set_status(Status(StatusCode.ERROR))
        span.end()

    def _leave(self) -> None:
        """End the state span (if one is open) and stop it being the current span."""
        if self.token is not None:
            context.detach(self.token)  # type: ignore[arg-type]
            self.token = None
        if self.state is not None:
            self.state.end()
            self.state = None
