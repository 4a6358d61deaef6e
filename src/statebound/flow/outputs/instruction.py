"""The prompter: an output function that sends an instruction into the history."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from statebound.flow.context import RunContext
from statebound.flow.outputs.base import Output

__all__ = ["Instruction"]


@dataclass(frozen=True, slots=True)
class Instruction(Output):
    """Send an instruction (a user message) into the history.

    ``text`` is a string, or ``text(ctx) -> str`` to compute it from the run.
    """

    text: str | Callable[[RunContext[Any, Any]], str]
    pure: ClassVar[bool] = True  # reaches nothing outside the run: redoing it gives the same entry

    async def run(self, ctx: RunContext[Any, Any]) -> None:
        text = self.text if isinstance(self.text, str) else self.text(ctx)
        ctx.add("user", text, "instruction")

    @property
    def label(self) -> str:
        return "Instruction"
