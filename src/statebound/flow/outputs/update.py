"""The output function that writes flow variables from the run: ``Update(fn, writes=[...])``."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from statebound.errors import DefinitionError
from statebound.flow.context import RunContext
from statebound.flow.outputs.base import Output

__all__ = ["Update"]


class Update(Output):
    """Write the fields ``fn(ctx)`` returns into the flow variables (``ctx.vars``; see
    :mod:`statebound.flow.variables`). ``writes`` declares the fields ``fn`` may write (writing
    one it does not declare is an error naming both); ``reads`` the ones it reads (diagrams show
    them)."""

    __slots__ = ("fn", "name", "reads", "writes")
    pure: ClassVar[bool] = True  # a function of the run: redoing it writes the same

    def __init__(self, fn: Callable[[RunContext[Any, Any]], Mapping[str, Any]], *, writes: Sequence[str] = (),
                 reads: Sequence[str] = ()) -> None:
        if not callable(fn):
            raise DefinitionError(f"Update needs a function fn(ctx) -> {{field: value}}, got {fn!r}")
        self.fn = fn
        self.name = getattr(fn, "__name__", type(fn).__name__)
        self.writes = tuple(writes)
        self.reads = tuple(reads)

    @property
    def label(self) -> str:
        return f"Update({self.name})"

    async def run(self, ctx: RunContext[Any, Any]) -> None:
        changes = self.fn(ctx)
        if not isinstance(changes, Mapping):
            raise DefinitionError(f"{self.label} returned {type(changes).__name__}; return a dict of fields to write")
        ctx.update(changes, by=self.label)
