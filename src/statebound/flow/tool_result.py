"""What a tool returns (a :class:`~statebound.flow.outputs.CallTool`'s function, or a function the
model calls through ``CallLLM(tools=...)``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["ToolResult"]


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool returns: the ``output`` text for the history, whether it succeeded (``ok``),
    optional structured ``data`` for later tools (never sent to the LLM) and ``update``, fields of
    the flow variables to write (:mod:`statebound.flow.variables`)."""

    output: str
    ok: bool = True
    data: Any = None
    update: Mapping[str, Any] | None = None
