"""What the outputs that run other flows declare besides the output contract: the flows they run
(:class:`Nested`), so diagrams draw them as clusters and ``flow check`` looks inside them.

The outputs themselves are :class:`~statebound.flow.outputs.sub.Sub` (one sub-machine) and
:class:`~statebound.flow.outputs.parallel.Parallel` / :class:`~statebound.flow.outputs.parallel.FanOut`
(branches that run concurrently); this module only names what they share, so the modules that
read it need not import the engine.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar, NamedTuple

from statebound.flow.outputs.base import Output

if TYPE_CHECKING:
    from statebound.flow.machine import Machine

__all__ = ["Child", "Nested"]


class Child(NamedTuple):
    """A flow an output runs: its key among the output's children (a branch's name; ``*`` for
    the one flow a fan-out runs over each item) and the flow."""

    key: str
    flow: Machine


class Nested(Output):
    """An output that runs other flows (module docstring). ``concurrent``: its children run side
    by side (drawn as concurrent regions)."""

    __slots__ = ()
    concurrent: ClassVar[bool] = False

    @abstractmethod
    def children(self) -> Sequence[Child]:
        """The flows it runs, in order."""
