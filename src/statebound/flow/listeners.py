"""Delivering a run's events: the ``RunFinished`` event, the callback types and the queue that
hands events to callbacks (sync or async) in order.

``RunFinished`` carries the :class:`~statebound.flow.result.RunResult`; it lives here, beside the
union of all events, so that :mod:`statebound.flow.events` never needs the result.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from statebound.errors import DefinitionError
from statebound.flow.events import StepEvent
from statebound.flow.result import RunResult

__all__ = ["Event", "EventCallback", "Listeners", "RunFinished", "sinks_of"]


@dataclass(frozen=True, slots=True)
class RunFinished:
    """The run ended; ``result`` holds everything (the dict form keeps the summary only)."""

    kind: ClassVar[str] = "run_finished"
    result: RunResult

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, **self.result.summary()}


Event = StepEvent | RunFinished
EventCallback = Callable[[Event], "None | Awaitable[None]"]


class Listeners:
    """Queues events synchronously (``emit``); ``flush`` delivers them (awaiting async callbacks)
    in order. With no callbacks, ``emit`` records each event at once and nothing is pending."""

    __slots__ = ("_delivering", "emit", "pending", "recorded", "sinks")

    def __init__(self, sinks: Sequence[EventCallback], record: bool) -> None:
        self.sinks = tuple(sinks)
        self.recorded: list[StepEvent] | None = [] if record else None
        self.pending: list[Event] = []
        self.emit: Callable[[Event], None] = (self.pending.append if self.sinks or self.recorded is None
                                              else self.recorded.append)  # type: ignore[assignment]
        self._delivering = asyncio.Lock()  # flushes from parallel branches deliver one after another, in order

    async def flush(self) -> None:
        async with self._delivering:
            pending = self.pending[:]
            self.pending.clear()  # in place: the run's emit is bound to this list's append
            if self.recorded is not None:
                # RunFinished is queued only after recording stops (recorded set to None)
                self.recorded.extend(pending)  # type: ignore[arg-type]
            for event in pending:
                for sink in self.sinks:
                    outcome = sink(event)
                    if inspect.isawaitable(outcome):
                        await outcome


def sinks_of(on_event: EventCallback | Sequence[EventCallback] | None) -> list[EventCallback]:
    """``on_event`` as a list of callables (None: none), or a DefinitionError naming the bad one."""
    if on_event is None:
        return []
    if callable(on_event):
        return [on_event]
    sinks = list(on_event)
    for sink in sinks:
        if not callable(sink):
            raise DefinitionError(f"on_event must be a callable or a list of callables, got {sink!r}")
    return sinks
