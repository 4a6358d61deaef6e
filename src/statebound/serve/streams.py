"""A run's events as the protocol streams them, by stream mode.

| mode | event | what it carries |
| --- | --- | --- |
| ``values`` | ``values`` | the thread's whole values after each transition and at the end |
| ``updates`` | ``updates`` | ``{state: {"messages": [...], "vars": {...}}}``: what each state visit added |
| ``messages``, ``messages-tuple`` | ``messages`` | ``[message, metadata]``: each reply's pieces as the model writes them (``AIMessageChunk``), and every message as it is added |
| ``events`` | ``events`` | every statebound event as its dict (``state_entered``, ``message_added``, ``vars_written``, ``transition_taken``, ``token``...) |
| ``custom`` | ``custom`` | the step events without messages and tokens |

Every stream opens with ``metadata`` (``{"run_id", "thread_id", "attempt"}``) and ends with ``end``
(after ``error`` when the run failed).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from statebound.flow.events import (
    MessageAdded,
    StateEntered,
    TokenDelta,
    TransitionTaken,
    VarsWritten,
)
from statebound.flow.listeners import RunFinished
from statebound.serve.shapes import message

__all__ = ["MODES", "Mirror"]

MODES = ("values", "updates", "messages", "messages-tuple", "events", "custom")
_SILENT_IN_CUSTOM = (MessageAdded.kind, TokenDelta.kind)

Emit = Callable[[str, Any], None]


class Mirror:
    """The thread's values kept up to date from a run's events, and the events of the stream
    modes asked for, handed to ``emit(event, data)`` as they come."""

    def __init__(self, thread: str, base: dict[str, Any], modes: Iterable[str], emit: Emit) -> None:
        self.thread = thread
        self.values = base  # {"messages", "vars", "task", "state", "turn", "trajectory", "status"}
        self.modes = frozenset("messages" if mode == "messages-tuple" else mode for mode in modes)
        self.emit = emit
        self.visit: dict[str, Any] = {"messages": [], "vars": {}}  # what the state visit added so far
        self.streamed: set[int] = set()  # messages whose pieces were streamed

    def event(self, event: Any) -> None:
        """One statebound event (a step event, a ``TokenDelta`` or ``RunFinished``)."""
        if isinstance(event, RunFinished):
            return
        kind = event.kind
        if "events" in self.modes:
            self.emit("events", event.to_dict())
        if "custom" in self.modes and kind not in _SILENT_IN_CUSTOM:
            self.emit("custom", event.to_dict())
        if isinstance(event, TokenDelta):
            self._piece(event)
        elif isinstance(event, MessageAdded):
            self._message(event)
        elif isinstance(event, VarsWritten):
            self.values["vars"] = {**(self.values.get("vars") or {}), **event.data}
            self.visit["vars"].update(event.data)
        elif isinstance(event, StateEntered):
            self.values["state"] = event.state
            self.values["trajectory"] = [*self.values.get("trajectory", ()), event.state]
        elif isinstance(event, TransitionTaken):
            self._visit_done(event.source)
            self.values["state"], self.values["turn"] = event.target, event.turn
            if "values" in self.modes:
                self.emit("values", self.values)

    def finish(self, shaped: dict[str, Any], last_state: str) -> None:
        """The run ended: the state it stopped in, then the thread's final values."""
        if self.visit["messages"] or self.visit["vars"]:
            self._visit_done(last_state)
        self.values = shaped
        if "values" in self.modes:
            self.emit("values", shaped)

    def _visit_done(self, state: str) -> None:
        if "updates" in self.modes:
            self.emit("updates", {state: {"messages": self.visit["messages"], "vars": self.visit["vars"]}})
        self.visit = {"messages": [], "vars": {}}

    def _message(self, event: MessageAdded) -> None:
        shaped = message(self.thread, event.index, event.entry)
        self.values["messages"] = [*self.values.get("messages", ()), shaped]
        self.visit["messages"].append(shaped)
        if "messages" in self.modes and event.index not in self.streamed:
            self.emit("messages", [shaped, self._meta(event.entry.state)])

    def _piece(self, delta: TokenDelta) -> None:
        index = len(self.values.get("messages", ()))  # the reply being written is the next message
        self.streamed.add(index)
        if "messages" in self.modes:
            chunk = {"type": "AIMessageChunk", "content": delta.text, "id": f"{self.thread}:{index}"}
            self.emit("messages", [chunk, self._meta(delta.state)])

    def _meta(self, state: str) -> dict[str, Any]:
        return {"langgraph_node": state, "langgraph_step": self.values.get("turn", 0), "thread_id": self.thread}
