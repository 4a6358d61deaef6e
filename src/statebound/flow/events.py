"""Typed events, one per step of a run, for progress display, logging and traces.

Every event has a ``kind`` and a JSON-friendly :meth:`to_dict`. A run emits, in order:
``StateEntered`` (for each state reached), ``MessageAdded`` (for each history entry),
``VarsWritten`` (for each write of flow variables), ``SpeakerSelected`` (group chats),
``TransitionTaken`` (after a state's outputs) and ``BudgetHit``
(when a turn, visit, round or token limit stops the run): the step events; runs that ask for
tokens also get ``TokenDelta`` pieces of each reply as it is written. The last event,
``RunFinished``, carries the result and lives in :mod:`statebound.flow.listeners`, so this module
and :mod:`statebound.flow.result` do not import each other.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar, Literal

import msgspec

from statebound.flow.history import Entry

__all__ = [
    "BudgetHit",
    "MessageAdded",
    "OutputDone",
    "SpeakerHow",
    "SpeakerSelected",
    "StateEntered",
    "StepEvent",
    "TokenDelta",
    "TransitionTaken",
    "VarsWritten",
    "refused_by_limit",
]

LimitKind = Literal["turns", "visits", "tokens", "rounds"]
SpeakerHow = Literal["function", "only", "auto", "manual", "random", "round_robin", "fallback"]


class _Event(msgspec.Struct, frozen=True):
    """What every event is: a frozen record with a ``kind``, whose :meth:`to_dict` is ``kind`` and
    its fields (those whose fields are not all plain values say otherwise)."""

    kind: ClassVar[str]

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, **msgspec.structs.asdict(self)}


class StateEntered(_Event, frozen=True):
    """The run reached ``state`` (``visit`` counts from 1; ``turn`` is transitions so far)."""

    kind: ClassVar[str] = "state_entered"
    state: str
    turn: int
    visit: int


class MessageAdded(_Event, frozen=True):
    """An entry was appended to the history at position ``index``."""

    kind: ClassVar[str] = "message_added"
    index: int
    entry: Entry

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "index": self.index, **self.entry.to_dict()}


class VarsWritten(_Event, frozen=True):
    """Output function ``by`` in ``state`` wrote fields of the flow variables: ``fields`` holds
    the new values as the run sees them (typed), ``data`` the same as JSON (what is stored)."""

    kind: ClassVar[str] = "vars_written"
    state: str
    by: str
    fields: Mapping[str, Any]
    data: Mapping[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "state": self.state, "by": self.by, "fields": dict(self.data)}


class SpeakerSelected(_Event, frozen=True):
    """A group chat picked ``role`` to speak next; ``how`` is ``function`` or the method that
    picked it (``auto``, ``manual``, ``random``, ``round_robin``), ``only`` when the graph allowed one role
    (AutoGen returns it without selecting), ``fallback`` when ``auto``'s
    answer named no role; ``choice`` records an ``auto`` pick made by a chooser (method,
    candidates, scores)."""

    kind: ClassVar[str] = "speaker_selected"
    state: str
    role: str
    how: SpeakerHow
    choice: Mapping[str, Any] | None = None


class TransitionTaken(_Event, frozen=True):
    """The transition function moved the run from ``source`` to ``target``; ``reason`` says why;
    ``choice`` records the choice an LLM-decided transition made (method, candidates, scores)."""

    kind: ClassVar[str] = "transition_taken"
    source: str
    target: str
    turn: int
    reason: str
    choice: Mapping[str, Any] | None = None


class BudgetHit(_Event, frozen=True):
    """A limit stopped the run: ``used`` reached ``allowed`` for ``limit`` at ``state`` (for visits
    and turns the state the run was about to enter and did not; for tokens and rounds the state
    that was running)."""

    kind: ClassVar[str] = "budget_hit"
    limit: LimitKind
    state: str
    used: int
    allowed: int


StepEvent = StateEntered | MessageAdded | VarsWritten | SpeakerSelected | TransitionTaken | BudgetHit


class OutputDone(_Event, frozen=True):
    """The step of one output function: ``index`` in ``state`` (``label`` names it) has run.
    What a :class:`~statebound.flow.engine.FlowRun` step returns; not sent to listeners (what the
    output added came as ``MessageAdded`` and ``VarsWritten``), never recorded."""

    kind: ClassVar[str] = "output_done"
    state: str
    index: int
    label: str


class TokenDelta(_Event, frozen=True):
    """A piece of the reply the model in ``state`` is writing, as it comes (runs asked for tokens:
    ``on_token=``, ``flow.stream(tokens=True)``); the whole reply follows as a ``MessageAdded``.
    Not a step: never recorded in ``result.events`` or a checkpoint."""

    kind: ClassVar[str] = "token"
    state: str
    text: str

_REFUSING = {"visits": "its visit limit", "turns": "the turn limit"}


def refused_by_limit(events: Iterable[Mapping[str, Any]]) -> str:
    """From a run's events (as dicts), the state a visit or turn limit kept it out of, said in a
    few words (``"B not entered: its visit limit is 2"``), or ``""`` when no such limit stopped it."""
    for event in events:
        if event.get("kind") == BudgetHit.kind and event.get("limit") in _REFUSING:
            return f"{event['state']} not entered: {_REFUSING[event['limit']]} is {event['allowed']}"
    return ""
