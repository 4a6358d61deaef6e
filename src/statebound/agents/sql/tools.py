"""Tools that let a flow act on an InterCode-SQL environment (``ctx.deps``), and the rules that
read their results."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from statebound.agents.turns import first_labelled, latest_reply, latest_tool_data
from statebound.flow import RunContext, ToolResult

__all__ = [
    "act",
    "action_has",
    "env_action",
    "extract_action",
    "extract_code",
    "failed_step",
    "is_done",
    "run_llm_action",
    "run_llm_code",
]

_ACTION = re.compile(r"Action(?:\s*\d+)?\s*:\s*", re.IGNORECASE)
_SQL_KEYWORDS = ("SHOW", "SELECT", "DESCRIBE", "DESC")


def extract_action(reply: str) -> str:
    """The action of a ``Thought: ... Action: ...`` reply: the text after the first ``Action:``, up
    to the next one (the authors' ``message.split("Action: ")[1]``, ``intercode_agent.py``).

    ``submit`` (alone on its line) becomes exactly ``submit``; with no ``Action:`` label the
    whole reply is the action (the environment then looks for ``execute[...]`` in it).
    """
    action = first_labelled(reply, _ACTION).strip()
    if re.match(r"^submit\b", action, re.IGNORECASE) and "execute[" not in action:
        return "submit"
    return action


def extract_code(reply: str) -> str | None:
    """Upstream InterCode's ``sql_parser``: a fenced code block, or the text from the first SQL
    keyword up to ``;``. None when the reply holds no SQL."""
    up_to_semicolon = (lambda text: text[: text.index(";")] if ";" in text else text)
    reply = reply.replace("\\_", "_")
    if "```" not in reply:
        for keyword in _SQL_KEYWORDS:
            if keyword in reply:
                return up_to_semicolon(reply[reply.index(keyword):]).strip()
    blocks = re.findall(r"```(?:sql|SQL)?([\S\s]+?)```", reply) + re.findall(r"```([\S\s]+?)```", reply)
    if not blocks:
        return None
    code = up_to_semicolon(" ".join(blocks[0].split()))
    if not code.split() or code.split()[0].upper() not in _SQL_KEYWORDS:
        return None
    return code


def act(ctx: RunContext, action: str, *, label: str = "Observation") -> ToolResult:
    """Send one action to the environment and report it as an observation."""
    step = ctx.deps.step(action)
    info: dict[str, Any] = dict(step.info)
    data = {"action": action, "kind": info.get("action", "invalid"), "sql": info.get("sql", ""),
            "done": step.done, "ok": step.ok}
    return ToolResult(f"{label}: {step.observation}", ok=step.ok, data=data)


def env_action(action: str) -> Callable[[RunContext], ToolResult]:
    """A tool that always sends ``action`` (e.g. Init's ``execute[SHOW TABLES]``)."""
    def run(ctx: RunContext) -> ToolResult:
        return act(ctx, action)
    run.__name__ = "sql"
    return run


def run_llm_action(ctx: RunContext) -> ToolResult:
    """Execute the action written in the latest LLM reply."""
    return act(ctx, extract_action(latest_reply(ctx)))


def run_llm_code(ctx: RunContext) -> ToolResult:
    """Execute the SQL code of the latest LLM reply (Plan & Solve's code-only replies)."""
    code = extract_code(latest_reply(ctx))
    return act(ctx, "execute[]" if code is None else f"execute[{code}]")


def is_done(ctx: RunContext) -> bool:
    """The environment ended the episode (submit, or the turn limit)."""
    return bool(latest_tool_data(ctx).get("done"))


def failed_step(ctx: RunContext) -> bool:
    """The latest action's output is an error string."""
    data = latest_tool_data(ctx)
    return bool(data) and not data.get("ok", True)


def action_has(text: str) -> Callable[[RunContext], bool]:
    """The latest action, as the model wrote it, contains ``text``: the authors' test for a SELECT is
    ``"execute[SELECT" in action`` (``InterCode/experiments/flow_sql.py``), case and spacing as written."""

    def rule(ctx: RunContext) -> bool:
        return text in str(latest_tool_data(ctx).get("action", ""))
    rule.__name__ = "action_has_" + "".join(c if c.isalnum() else "_" for c in text).strip("_").lower()
    return rule
