"""A flow whose variables hold one field of every type a flow accepts, for the live-flow type
matrix (test_live_vars_types.py). Run as a script it starts or resumes the thread ``t`` in the
store given, and its ``Crash`` tool kills its own process with SIGKILL the first time it runs."""

from __future__ import annotations

import enum
import os
import signal
import sys
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from statebound.flow import AskHuman, CallTool, Flow, State, ToolResult, Update, always
from statebound.flow.live import open_checkpointer


class Severity(enum.Enum):
    LOW = "low"
    HIGH = "high"


class Report(BaseModel):
    severity: Literal["low", "high"]
    title: str


@dataclass(frozen=True)
class Item:
    name: str
    count: int = 1


@dataclass(frozen=True)
class Triage:
    report: Report | None = None
    items: list[Item] = field(default_factory=list)
    pair: tuple[str, int] = ("", 0)
    by_name: dict[str, Item] = field(default_factory=dict)
    tags: set[str] = field(default_factory=set)
    frozen: frozenset[int] = frozenset()
    maybe: Item | None = None
    either: int | str = 0
    severity: Severity = Severity.LOW
    stage: Literal["new", "done"] = "new"
    due: date | None = None
    seen: datetime | None = None
    nested: list[dict[str, tuple[Item, ...]]] = field(default_factory=list)


FILLED = Triage(
    report=Report(severity="high", title="disk full"),
    items=[Item("disk", 2), Item("fan")],
    pair=("rack", 7),
    by_name={"disk": Item("disk", 2)},
    tags={"urgent", "hardware"},
    frozen=frozenset({3, 1}),
    maybe=Item("spare"),
    either="seven",
    severity=Severity.HIGH,
    stage="done",
    due=date(2026, 12, 24),
    seen=datetime(2026, 12, 6, 9, 30, tzinfo=UTC),
    nested=[{"a": (Item("x"),)}],
)


def fill(ctx) -> dict:
    """Writes each field as a user's tool would: typed values, some as plain data to be converted."""
    return {name: getattr(FILLED, name) for name in ("report", "items", "pair", "by_name", "tags", "frozen",
                                                      "maybe", "either", "severity", "stage", "due", "seen")} | {
        "nested": [{"a": [{"name": "x", "count": 1}]}]}  # plain data: converted to its declared type at once


def typed(ctx) -> bool:
    """Reads every field by its type (attributes, methods): fails on a dict where a value was."""
    v = ctx.vars
    return (v.report.severity == "high" and v.items[1].count == 1 and v.pair[1] == 7
            and v.by_name["disk"].count == 2 and v.tags >= {"urgent"} and min(v.frozen) == 1
            and v.maybe.name == "spare" and v.either.upper() == "SEVEN" and v.severity is Severity.HIGH
            and v.due.year == 2026 and v.seen.tzinfo is not None and v.nested[0]["a"][0].name == "x")


def crash_once(ctx) -> ToolResult:
    marker = Path(os.environ["CRASH_MARKER"])
    if not marker.exists():
        marker.write_text("crashed")
        os.kill(os.getpid(), signal.SIGKILL)
    return ToolResult("survived")


flow = Flow(name="triage", initial="Fill", vars=Triage, states=[
    State("Fill", outputs=[Update(fill, writes=list(FILLED.__dataclass_fields__))], transitions=[(always(), "Ask")]),
    State("Ask", outputs=[AskHuman("Go on?")], transitions=[(always(), "Crash")]),
    State("Crash", outputs=[CallTool(crash_once)], transitions=[(typed, "Done"), (always(), "Wrong")]),
    State("Done", final=True),
    State("Wrong", final=True),
])

if __name__ == "__main__":
    where, answer = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else None)
    with open_checkpointer(where) as store:
        if store.record("t") is None:
            result = flow.run_sync("triage the ticket", checkpointer=store, thread="t")
        else:
            result = flow.resume_sync("t", checkpointer=store, input=answer)
    print(result.exit_reason.value, result.exit_state)
