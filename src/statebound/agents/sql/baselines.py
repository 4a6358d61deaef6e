"""The benchmark's baselines as flows: ReAct, ReAct_Refined and Plan & Solve (upstream InterCode)."""

from __future__ import annotations

import re

from statebound.agents.budget import transitions_for
from statebound.agents.response_format import (
    ResponseFormat,
    code_block_grammar,
    thought_action_grammar,
)
from statebound.agents.sql import prompts
from statebound.agents.sql.tools import act, env_action, extract_action, is_done, run_llm_code
from statebound.agents.turns import latest_reply
from statebound.flow import CallLLM, CallTool, Flow, RunContext, State, ToolResult, always
from statebound.llm.base import Message

__all__ = ["build_plan_solve", "build_react", "parse_plan"]


def build_react(*, refined: bool = False, max_tokens: int = 256, max_turns: int = 10,
                response_format: ResponseFormat = "free") -> Flow:
    """Few-shot ReAct: one state that asks for ``Thought n`` / ``Action n`` and runs the action
    (``response_format="grammar"``: each reply constrained to that shape)."""
    grammar = thought_action_grammar(numbered=True) if response_format == "grammar" else None
    demos = prompts.REACT_REFINED_DEMOS if refined else prompts.REACT_DEMOS
    system = prompts.REACT_INTRO + demos

    def render(ctx: RunContext) -> list[Message]:
        turn = sum(1 for e in ctx.history if e.source == "tool") + 1
        lines = [f"Question: {ctx.task}"]
        step = 0
        for entry in ctx.history:
            if entry.source == "llm":
                step += 1
                lines.append(f"Thought {step}: {entry.content.strip()}")
            elif entry.source == "tool":
                lines.append(entry.content)
        lines.append(f"Thought {turn}:")
        return [Message("system", system), Message("user", "\n".join(lines))]

    def run_action(ctx: RunContext) -> ToolResult:
        turn = sum(1 for e in ctx.history if e.source == "tool") + 1
        return act(ctx, extract_action(latest_reply(ctx)), label=f"Observation {turn}")

    state = State("ReAct", outputs=[
        CallLLM(render=render, max_tokens=max_tokens, stop=("\nObservation",), grammar=grammar),
        CallTool(run_action, name="sql"),
    ], transitions=[(is_done, "End"), (always(), "ReAct")])
    return Flow(name="react-refined" if refined else "react", initial="ReAct",
                states=[state, State("End", final=True)], max_turns=transitions_for(max_turns, outside=1))


def parse_plan(text: str) -> list[str]:
    """Upstream's plan parser: the numbered items ``1. ...``, ``2. ...``."""
    return [step.strip() for step in re.findall(r"\d+\.\s(.*?)(?=\s\d+\.|\Z)", text, re.DOTALL)]


def build_plan_solve(*, max_tokens: int = 256, max_turns: int = 10,
                     response_format: ResponseFormat = "free") -> Flow:
    """Plan & Solve: the model writes a numbered plan, then one SQL command per plan step
    (``response_format="grammar"``: each command a one-line code block; the plan stays free)."""
    grammar = code_block_grammar(prompts.LANGUAGE) if response_format == "grammar" else None

    def plan_messages(ctx: RunContext) -> list[Message]:
        return [Message("system", prompts.PLAN_INTRO), Message("user", f"Question: {ctx.task}")]

    def plan_steps(ctx: RunContext) -> list[str]:
        plan = next((e for e in ctx.history if e.source == "llm" and e.state == "Plan"), None)
        return parse_plan(plan.content) if plan else []

    def executed(ctx: RunContext) -> list:
        return [e for e in ctx.history if e.state == "Execute"]

    def execute_messages(ctx: RunContext) -> list[Message]:
        messages = plan_messages(ctx)
        plan = next(e for e in ctx.history if e.source == "llm" and e.state == "Plan")
        messages += [Message("assistant", plan.content), Message("system", prompts.PLAN_EXECUTE)]
        observation = None
        steps = plan_steps(ctx)
        done = 0
        for entry in executed(ctx):
            if entry.source == "llm":
                messages.append(Message("user", _step_message(observation, steps[done])))
                messages.append(Message("assistant", entry.content))
                done += 1
            elif entry.source == "tool":
                observation = entry.content.removeprefix("Observation: ")
        messages.append(Message("user", _step_message(observation, steps[done])))
        return messages

    def steps_left(ctx: RunContext) -> bool:
        done = sum(1 for e in executed(ctx) if e.source == "llm")
        return done < len(plan_steps(ctx))

    states = [
        State("Plan", outputs=[CallLLM(render=plan_messages, max_tokens=max_tokens)],
              transitions=[(steps_left, "Execute"), (always(), "Submit")]),
        State("Execute", outputs=[
            CallLLM(render=execute_messages, max_tokens=max_tokens, grammar=grammar),
            CallTool(run_llm_code, name="sql"),
        ], transitions=[(is_done, "End"), (steps_left, "Execute"), (always(), "Submit")]),
        State("Submit", outputs=[CallTool(env_action("submit"), name="sql")],
              transitions=[(always(), "End")]),
        State("End", final=True),
    ]
    return Flow(name="plan-solve", initial="Plan", states=states, max_turns=transitions_for(max_turns, outside=3))


def _step_message(observation: str | None, step: str) -> str:
    return f"Step: {step}" if observation is None else f"Observation: {observation}\nStep: {step}"
