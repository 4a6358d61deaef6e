"""Human-in-the-loop: an output function that pauses the run until a person answers.

``AskHuman("Approve this query?")`` ends the run with ``ExitReason.PAUSED`` and the question in
``result.pending``; with a checkpointer the pause is stored, survives a restart, and
``flow.resume(thread, input="yes", checkpointer=...)`` continues: the answer is appended to the
history as a ``user`` entry with ``source="human"`` (the model reads it as a user message), and
rules branch on it like on any other entry, e.g. ``(contains("yes", source="human"), "Run")``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from statebound.errors import DefinitionError
from statebound.flow.context import PauseRun, RunContext
from statebound.flow.outputs.base import Output

__all__ = ["AskHuman"]


@dataclass(frozen=True, slots=True)
class AskHuman(Output):
    """Pause the run with ``question`` (a string or ``question(ctx) -> str``) until a person
    answers; the answer becomes a ``source="human"`` entry (``name`` tags it, e.g. "approval")."""

    question: str | Callable[[RunContext[Any, Any]], str]
    name: str | None = None

    async def run(self, ctx: RunContext[Any, Any]) -> None:
        reply = ctx.reply
        if reply is None:
            raise PauseRun(self.question if isinstance(self.question, str) else self.question(ctx))
        if not isinstance(reply, str):
            raise DefinitionError(f"state {ctx.state!r} waits on one question, not on questions by id "
                                  f"({', '.join(reply)}): answer it with text")
        ctx.reply = None
        ctx.add("user", reply, "human", name=self.name)

    @property
    def label(self) -> str:
        return "AskHuman"
