"""Declared writes a run never made: an output function's ``writes`` that names a field it did not
write is reported, naming the state, the output and the field, once the run that shows it ends.

An output may write a field only on some runs (a tool that records what it found, when it found
something), so only a run that went from its start to a final state, with the output finishing each
time it ran, can show that a declaration is never used; it is then a warning, not an error (an
undeclared write is an error at once: :meth:`RunContext.update
<statebound.flow.context.RunContext.update>`)."""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from statebound.flow.context import OutputInfo

__all__ = ["DeclaredWrites", "UnwrittenDeclaration"]


class UnwrittenDeclaration(UserWarning):
    """An output function declares a write (``writes=``) it never made in a whole run."""


class DeclaredWrites:
    """What the outputs that declare writes wrote over one run, by output."""

    __slots__ = ("_ran", "_written")

    def __init__(self) -> None:
        self._ran: dict[int, tuple[str, OutputInfo]] = {}  # id(output) -> (state, output)
        self._written: dict[int, set[str]] = {}

    def ran(self, state: str, output: OutputInfo) -> None:
        """``output`` (which declares writes) ran in ``state``."""
        self._ran.setdefault(id(output), (state, output))

    def wrote(self, output: OutputInfo, fields: Iterable[str]) -> None:
        self._written.setdefault(id(output), set()).update(fields)

    def unwritten(self) -> list[tuple[str, str, str]]:
        """``(state, output label, field)`` for each declared write never made."""
        return [(state, output.label, field) for key, (state, output) in self._ran.items()
                for field in _declared(output.writes) if field not in self._written.get(key, ())]

    def warn(self, flow: str) -> None:
        for state, label, field in self.unwritten():
            warnings.warn(UnwrittenDeclaration(
                f"flow {flow!r}, state {state!r}: {label} declares it writes {field!r} but did not write it in a "
                "whole run; drop it from writes= or write it"), stacklevel=2)


def _declared(writes: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(writes))
