"""Flows the server tests serve: ``steps`` (three states, no model), ``approve`` (a model writes a
draft, a person approves it; typed variables) and ``shop`` (the model calls a tool that must not
run twice)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from statebound.flow import (
    AskHuman,
    CallLLM,
    CallTool,
    Flow,
    Instruction,
    State,
    ToolResult,
    Update,
    always,
    called,
    contains,
    tool,
)


def count_words(ctx) -> ToolResult:
    return ToolResult(f"{len(ctx.task.split())} words", data={"words": len(ctx.task.split())})


steps = Flow(name="steps", initial="Read", states=[
    State("Read", outputs=[Instruction("Count the words."), CallTool(count_words, blocking=False)],
          transitions=[(always(), "Report")]),
    State("Report", outputs=[Instruction(lambda ctx: f"Done: {ctx.last_of('tool').content}")],
          transitions=[(always(), "End")]),
    State("End", final=True),
])


@dataclass(frozen=True)
class Draft:
    approved: bool = False
    tone: str = "plain"


approve = Flow(name="approve", initial="Write", vars=Draft, states=[
    State("Write", outputs=[CallLLM(max_tokens=16)], transitions=[(always(), "Ask")]),
    State("Ask", outputs=[AskHuman(lambda ctx: f"Send {ctx.last_of('llm').content!r} ({ctx.vars.tone})?"),
                          Update(lambda ctx: {"approved": "yes" in ctx.last.content.lower()}, writes=["approved"])],
          transitions=[(lambda ctx: ctx.vars.approved, "Sent"), (always(), "Write")]),
    State("Sent", final=True),
], max_turns=6)


def pay(amount: int) -> str:
    """Pay an amount."""
    with open(os.environ["PAID_LOG"], "a") as log:
        log.write(f"paid {amount}\n")
    marker = Path(os.environ["PAID_LOG"] + ".die")
    if marker.exists():  # the test asks the server to die inside the payment, once
        marker.unlink()
        os.kill(os.getpid(), 9)
    return f"paid {amount}"


pay_once = CallLLM(tools=[tool(pay, repeatable=False)])
shop = Flow(name="shop", initial="Pay", max_turns=4, states=[
    State("Pay", outputs=[Instruction("Pay 5."), pay_once], transitions=[(called(), "Answer"), (always(), "End")]),
    State("Answer", outputs=[pay_once], transitions=[(contains("done"), "End"), (always(), "Answer")]),
    State("End", final=True),
])


async def nap(ctx) -> ToolResult:
    """Sleeps as long as the task says (seconds): a run to cancel, or to find busy."""
    import asyncio

    await asyncio.sleep(float(ctx.task))
    return ToolResult("rested")


slow = Flow(name="slow", initial="Nap", states=[
    State("Nap", outputs=[CallTool(nap)], transitions=[(always(), "Up")]),
    State("Up", final=True),
])
