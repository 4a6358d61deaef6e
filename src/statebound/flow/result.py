"""What a run returns: exit state and reason, the full history, usage per call, state and run."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Literal

import msgspec

from statebound.exits import ExitReason
from statebound.flow.events import StepEvent
from statebound.flow.history import Entry, Source
from statebound.flow.variables import VarsT
from statebound.llm.base import Usage

__all__ = ["CallRecord", "ExitReason", "RunResult", "usage_dict"]

CallKind = Literal["llm", "choice", "speaker"]


class CallRecord(msgspec.Struct, frozen=True, eq=False):
    """One LLM call: where it happened, what for (``llm`` output, transition ``choice``,
    ``speaker`` selection), the model, its usage, its cost (None when unknown) and how long it
    took, in seconds (None for calls read back from a checkpoint). Two records of the same call
    are equal however long each took."""

    state: str
    kind: CallKind
    model: str
    usage: Usage
    cost: float | None = None
    seconds: float | None = None

    def _call(self) -> tuple[Any, ...]:  # what the call was: all but its timing
        return self.state, self.kind, self.model, self.usage, self.cost

    def __eq__(self, other: object) -> bool:
        return self._call() == other._call() if isinstance(other, CallRecord) else NotImplemented

    def __hash__(self) -> int:
        return hash(self._call())


def usage_dict(usage: Usage) -> dict[str, int]:
    return {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "calls": usage.calls,
    }


@dataclass(frozen=True, slots=True)
class RunResult(Generic[VarsT]):
    """The outcome of :meth:`Flow.run <statebound.flow.Flow.run>`.

    ``usage`` sums every LLM call of the run (including transition and speaker choices);
    ``usage_by_state`` splits it by state; ``calls`` lists each call; ``cost`` is the run's cost
    in USD when :mod:`statebound.llm.pricing` knows every model used, else None.
    ``trajectory`` lists the states entered, in order; ``exit_state`` is the last of them (a state
    a visit or turn limit kept the run out of is not entered: the ``BudgetHit`` event names it). ``error`` is set
    when ``exit_reason`` is :attr:`ExitReason.ERROR`; ``pending`` is the question a paused run
    (:attr:`ExitReason.PAUSED`) waits on. ``vars`` are the flow variables where the run ended
    (None: the flow declares none). ``unwritten`` names, for a run from its start to a final state,
    each write an output function declares and never made: ``(state, output, field)``.
    """

    task: str
    exit_state: str
    exit_reason: ExitReason
    history: tuple[Entry, ...]
    usage: Usage
    usage_by_state: Mapping[str, Usage]
    calls: tuple[CallRecord, ...]
    turns: int
    trajectory: tuple[str, ...]
    cost: float | None = None
    error: BaseException | None = None
    events: tuple[StepEvent, ...] = field(default=(), repr=False)
    pending: str | None = None
    vars: VarsT | None = None
    unwritten: tuple[tuple[str, str, str], ...] = ()

    @property
    def ok(self) -> bool:
        """True when the run ended in a final state."""
        return self.exit_reason is ExitReason.FINAL

    def last(self, source: Source | None = None) -> Entry | None:
        """The latest history entry (of ``source``, when given)."""
        for entry in reversed(self.history):
            if source is None or entry.source == source:
                return entry
        return None

    def summary(self) -> dict[str, Any]:
        """A JSON-friendly summary (no history)."""
        return {
            "task": self.task,
            "exit_state": self.exit_state,
            "exit_reason": self.exit_reason.value,
            "turns": self.turns,
            "trajectory": list(self.trajectory),
            "usage": usage_dict(self.usage),
            "usage_by_state": {s: usage_dict(u) for s, u in self.usage_by_state.items()},
            "cost": self.cost,
            "error": None if self.error is None else f"{type(self.error).__name__}: {self.error}",
            **({"pending": self.pending} if self.pending is not None else {}),
        }
