"""Declared writes a run never made: an output function's ``writes`` that names a field it did not
write is listed in the run's result (``RunResult.unwritten``: the state, the output and the field),
and ``statebound run`` prints it.

An output may write a field only on some runs (a tool that records what it found, when it found
something), so only a run that went from its start to a final state, with the output finishing each
time it ran, can show that a declaration is never used; it is then a note, not an error (an
undeclared write is an error at once: :meth:`RunContext.update
<statebound.flow.context.RunContext.update>`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

__all__ = ["DeclaredWrites", "Declares"]


class Declares(Protocol):
    """What is read of an output function here: its label and the writes it declares (the part of
    :class:`~statebound.flow.context.OutputInfo` this module needs)."""

    @property
    def label(self) -> str: ...

    @property
    def writes(self) -> Sequence[str]: ...


class DeclaredWrites:
    """What the outputs that declare writes wrote over one run, by output."""

    __slots__ = ("_ran", "_written")

    def __init__(self) -> None:
        self._ran: dict[int, tuple[str, Declares]] = {}  # id(output) -> (state, output)
        self._written: dict[int, set[str]] = {}

    def ran(self, state: str, output: Declares) -> None:
        """``output`` (which declares writes) ran in ``state``."""
        self._ran.setdefault(id(output), (state, output))

    def wrote(self, output: Declares, fields: Iterable[str]) -> None:
        self._written.setdefault(id(output), set()).update(fields)

    def unwritten(self) -> list[tuple[str, str, str]]:
        """``(state, output label, field)`` for each declared write never made."""
        return [(state, output.label, field) for key, (state, output) in self._ran.items()
                for field in _declared(output.writes) if field not in self._written.get(key, ())]


def _declared(writes: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(writes))
