"""The flow tool that acts on a :class:`~statebound.envs.bash.BashEnv` (``ctx.deps``), how a reply
becomes an action, how a failed execution is recognised, and the transition rules over outcomes.

Each execution is classified into one outcome, which is all the Bash machines look at:
``submit`` (the episode was submitted), ``error`` (the command failed), ``empty`` (it ran and
printed nothing) or ``output`` (it ran and printed something). What counts as failed is the
machine's choice: StateFlow's machine decides as the authors' code does (:func:`authors_failed`,
error strings in the observation shown, the exit status plays no part); our extensions and the
baselines use :func:`execution_failed` (a non-zero exit status or an error string).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Literal

from statebound.agents.turns import first_labelled, latest_reply, latest_tool_data
from statebound.envs.base import StepResult
from statebound.envs.bash.actions import INVALID_ACTION_OBSERVATION, format_execute
from statebound.envs.bash.env import TIMEOUT_OBSERVATION
from statebound.flow import RunContext, ToolResult, repeated

__all__ = [
    "AUTHORS_ERROR_MARKERS", "ERROR_MARKERS", "Outcome", "action_from_reply", "authors_failed", "code_from_reply",
    "execute_as_authors", "execute_code", "execute_reply", "execution_failed", "executor", "outcome_is",
    "same_command_again", "step_outcome",
]  # fmt: skip

Outcome = Literal["submit", "error", "empty", "output"]

# Strings upstream's shell and runner print when an action fails; a pipeline can print one and
# still exit 0 (``xxd f | head``), so they count as failures too.
ERROR_MARKERS = (
    TIMEOUT_OBSERVATION,
    "Malformed command",
    INVALID_ACTION_OBSERVATION,
    "command not found",
    "No such file or directory",
    "syntax error",
    "unexpected EOF",
)
# The strings the authors' ``check_success`` looks for in the observation
# (``InterCode/experiments/flow_bash.py``); ``Command timed out`` is also this sandbox's timeout text.
AUTHORS_ERROR_MARKERS = (
    "exec failed",
    "missing argument",
    "command not found",
    "invalid option",
    TIMEOUT_OBSERVATION,
    "No such file or directory",
    "syntax error",
)
_ACTION_LABEL = re.compile(r"^\s*Action(?:\s+\d+)?\s*:", re.IGNORECASE | re.MULTILINE)
_FENCE = re.compile(r"```(?:bash|BASH|sh)?\s*\n?(.*?)```", re.DOTALL)


def action_from_reply(reply: str) -> str:
    """The action of a ``Thought: ... Action: ...`` reply: the text after the first label, up to the
    next one (the authors' ``message.split("Action: ")[1]``, ``intercode_agent.py``).

    A bare ``submit`` becomes ``submit``; a reply without a label is passed on whole, so that the
    environment finds ``execute[...]`` in it or answers with its invalid-action observation.
    """
    action = first_labelled(reply, _ACTION_LABEL).strip()
    if "execute[" not in action and action.lower().rstrip(".").endswith("submit"):
        return "submit"
    return action


def code_from_reply(reply: str) -> str:
    """A code-only reply as an action: the first fenced block, else the whole reply on one line."""
    fenced = _FENCE.search(reply)
    code = fenced.group(1) if fenced else reply
    return format_execute(" ".join(code.split()))


def execution_failed(step: StepResult) -> bool:
    """Whether an executed action failed: a non-zero exit status or an upstream error string."""
    return not step.ok or any(marker in step.observation for marker in ERROR_MARKERS)


def authors_failed(step: StepResult) -> bool:
    """Whether the authors' machine takes the step for a failure: one of their error strings is in
    the observation the model sees (a ``grep`` that finds nothing, exit status 1, is no failure)."""
    return any(marker in step.observation for marker in AUTHORS_ERROR_MARKERS)


def step_outcome(step: StepResult, *, failed: Callable[[StepResult], bool] = execution_failed) -> Outcome:
    if step.done:
        return "submit"
    if failed(step):
        return "error"
    return "output" if step.observation.strip() else "empty"


def executor(
    *, read: Callable[[str], str] = action_from_reply, failed: Callable[[StepResult], bool] = execution_failed
) -> Callable[[RunContext], ToolResult]:
    """A tool that sends the action ``read`` finds in the latest LLM reply and classifies the step
    with ``failed``; its data: the action, the outcome and the observation."""

    def execute(ctx: RunContext) -> ToolResult:
        action = read(latest_reply(ctx))
        step: StepResult = ctx.deps.step(action)
        outcome = step_outcome(step, failed=failed)
        data = {"action": action, "outcome": outcome, "observation": step.observation}
        return ToolResult(f"Observation: {step.observation}", ok=outcome != "error", data=data)

    return execute


execute_reply = executor()  # the action of the latest reply (the baselines and our extensions)
execute_code = executor(read=code_from_reply)  # the command of a code-only reply (Plan & Solve)
execute_as_authors = executor(failed=authors_failed)  # StateFlow's machine


def outcome_is(*outcomes: Outcome) -> Callable[[RunContext], bool]:
    """A transition rule: the latest execution of this state visit had one of ``outcomes``."""

    def rule(ctx: RunContext) -> bool:
        return latest_tool_data(ctx).get("outcome") in outcomes

    rule.__name__ = "outcome_" + "_or_".join(outcomes)
    return rule


# the command just run is the one run before it (whatever thoughts came with them)
same_command_again = repeated(2, source="tool", key=lambda entry: (entry.data or {}).get("action"))
