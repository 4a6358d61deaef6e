"""The output function that writes flow variables from the run: ``Update(fn, writes=[...])``."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from statebound.errors import DefinitionError
from statebound.flow.context import RunContext

__all__ = ["Update"]


class Update:
    """Write the fields ``fn(ctx)`` returns into the flow variables (``ctx.vars``; see
    :mod:`statebound.flow.variables`). ``writes`` declares the fields ``fn`` may write, for
    static checks and the diagram; writing one it does not declare is an error naming both."""

    __slots__ = ("fn", "name", "writes")
    pure: ClassVar[bool] = True  # a function of the run: redoing it writes the same

    def __init__(self, fn: Callable[[RunContext[Any]], Mapping[str, Any]], *, writes: Sequence[str] = ()) -> None:
        if not callable(fn):
            raise DefinitionError(f"Update needs a function fn(ctx) -> {{field: value}}, got {fn!r}")
        self.fn = fn
        self.name = getattr(fn, "__name__", type(fn).__name__)
        self.writes = tuple(writes)

    @property
    def label(self) -> str:
        return f"Update({self.name})"

    async def run(self, ctx: RunContext[Any]) -> None:
        changes = self.fn(ctx)
        if not isinstance(changes, Mapping):
            raise DefinitionError(f"{self.label} returned {type(changes).__name__}; return a dict of fields to write")
        undeclared = sorted(set(changes) - set(self.writes)) if self.writes else []
        if undeclared:
            raise DefinitionError(f"{self.label} writes {undeclared[0]!r}, which its writes={list(self.writes)} "
                                  "does not declare")
        ctx.update(changes, by=self.label)
