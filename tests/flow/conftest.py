from __future__ import annotations

import pytest
from postgres_server import postgres_server, postgres_url  # noqa: F401 - fixtures of the PostgreSQL tests

from statebound.flow import (
    CallLLM,
    CallTool,
    Flow,
    Instruction,
    State,
    ToolResult,
    always,
    contains,
    tool_failed,
    tool_ok,
)


def check_four(ctx) -> ToolResult:
    reply = ctx.last_of("llm").content
    return ToolResult(f"Observation: {reply}", ok=reply.strip() == "4")


@pytest.fixture
def retry_flow() -> Flow:
    """Solve -> (tool ok) End | (tool failed) Error -> ... -> End."""
    return Flow(
        name="retry",
        initial="Solve",
        system="SYSTEM",
        states=[
            State("Solve", outputs=[Instruction("SOLVE"), CallLLM(), CallTool(check_four)],
                  transitions=[(tool_failed(), "Error"), (tool_ok(), "End")]),
            State("Error", outputs=[Instruction("ERROR"), CallLLM(), CallTool(check_four)],
                  transitions=[(tool_ok(), "End"), (always(), "Error")]),
            State("End", final=True),
        ],
        max_turns=10,
    )


@pytest.fixture
def submit_flow() -> Flow:
    """One LLM state looping until the reply contains 'submit'."""
    return Flow(
        name="loop",
        initial="Work",
        states=[
            State("Work", outputs=[CallLLM()], transitions=[(contains("submit"), "End"), (always(), "Work")]),
            State("End", final=True),
        ],
        max_turns=5,
    )
