"""The contract of an output function: what a state does when entered, and what it declares.

An output function is an :class:`Output`: its ``run(ctx)`` appends to the history
(``ctx.add``, ``ctx.complete``) and may write flow variables (``ctx.update``). What it declares
tells the engine, the checkpoints, ``flow check`` and the diagrams how to treat it; each
declaration has a default, so an output of your own that declares nothing is treated as a call
out of the run that writes no variable:

================  ================  ================================================================
declaration       default           what it says
================  ================  ================================================================
``label``         the class name    its name on diagrams and in a stored thread's signature
``detail``        ``label``         its name on diagrams, when it has a longer one
                                    (``LLM(schema=Report)``)
``reads``         none              the flow variables it reads (diagrams show them)
``writes``        none              the flow variables it may write: writing another is an error
                                    naming the field
``repeatable``    True              False: it must not run twice (it pays, sends): a checkpointed run
                                    cut off inside it asks a person before running it again
``pure``          False             True: it reaches nothing outside the run (no model, no tool), so
                                    its checkpoint is committed with the next one
``check_model``   any model         refuse, before the run, a model it cannot use
``problems_in``   none              what is wrong with it in a state of a flow with given variables
                                    (a sub-machine's projection), said when the flow is built
================  ================  ================================================================
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from statebound.flow.context import RunContext
    from statebound.flow.variables import VarsSpec
    from statebound.llm.base import LLM

__all__ = ["Output"]


class Output(ABC):
    """An output function (module docstring): subclass it and write ``async run(ctx)``."""

    __slots__ = ()

    reads: Sequence[str] = ()
    writes: Sequence[str] = ()
    repeatable: bool = True
    pure: ClassVar[bool] = False

    @property
    def label(self) -> str:
        """Its name on diagrams and in a stored thread's signature (the class name)."""
        return type(self).__name__

    @property
    def detail(self) -> str:
        """Its name on diagrams (``label``, unless it has a longer one)."""
        return self.label

    def check_model(self, llm: LLM | None, *, where: str) -> None:
        """Refuse, before the run starts, a model it cannot use (``llm``: the model the state
        would call; ``where`` names the state for the message). Any model, by default."""
        return None

    def problems_in(self, state: str, vars: VarsSpec | None) -> list[str]:  # noqa: A002 - the flow's vars
        """What is wrong with it as an output of ``state`` in a flow whose variables are ``vars``
        (None: it declares none), each naming the state and the field; the flow is refused with
        them when it is built. Nothing, by default."""
        return []

    @abstractmethod
    async def run(self, ctx: RunContext[Any, Any]) -> None:
        """Do what entering the state does: append to the history, write flow variables."""
