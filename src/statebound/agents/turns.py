"""What the benchmark agents' tools and rules read from a run: the latest reply and tool data."""

from __future__ import annotations

import re
from typing import Any

from statebound.flow import RunContext

__all__ = ["first_labelled", "latest_reply", "latest_tool_data"]


def latest_reply(ctx: RunContext) -> str:
    """The text of the latest LLM reply (empty before the first)."""
    reply = ctx.last_of("llm")
    return reply.content if reply is not None else ""


def latest_tool_data(ctx: RunContext, *, since_entered: bool = True) -> dict[str, Any]:
    """The structured ``data`` of the latest tool result (of this state visit, by default);
    empty when there is none or it is not a dict."""
    entry = ctx.last_of("tool", since_entered=since_entered)
    return entry.data if entry is not None and isinstance(entry.data, dict) else {}


def first_labelled(reply: str, label: re.Pattern[str]) -> str:
    """The text after the first ``label`` in ``reply``, up to the next one; the whole reply when
    it has none (a reply with two ``Action:`` lines acts on the first, as the authors' code does)."""
    labels = list(label.finditer(reply))
    if not labels:
        return reply
    return reply[labels[0].end():labels[1].start() if len(labels) > 1 else len(reply)]
