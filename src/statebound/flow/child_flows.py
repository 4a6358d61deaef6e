"""The flow a child run's thread was stored by, found from the top-level flow and the child's path
(``Research.1/b2/Check.1/inner``): what a fork of the child checks its variables against."""

from __future__ import annotations

from statebound.flow.machine import Machine
from statebound.flow.outputs.nesting import Nested

__all__ = ["flow_at"]


def flow_at(machine: Machine, path: str) -> Machine | None:
    """The flow that runs at ``path`` (``STATE.VISIT/KEY``, repeated) under ``machine``; None
    when ``machine`` runs no child there."""
    parts = path.split("/")
    if len(parts) % 2:
        return None
    flow = machine
    for where, key in zip(parts[0::2], parts[1::2]):
        state = flow.states_by_name.get(where.rpartition(".")[0])
        if state is None:
            return None
        found = [child.flow for output in state.outputs if isinstance(output, Nested)
                 for child in output.children() if child.key in (key, "*")]
        if not found:
            return None
        flow = found[0]
    return flow
