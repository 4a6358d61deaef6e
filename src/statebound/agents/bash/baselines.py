"""The baselines of the Bash experiments as flows: ReAct and Plan & Solve (upstream InterCode).

ReAct is one state that shows the model the few-shot prompt plus the numbered ``Thought n`` /
``Action n`` / ``Observation n`` lines so far, ending in ``Thought n:``, and runs the action it
writes. Plan & Solve asks for a numbered plan, then for one command per plan step (code-only
replies), and submits after the last step.
"""

from __future__ import annotations

import re

from statebound.agents.bash import prompts
from statebound.agents.bash.tools import execute_code, execute_reply, outcome_is
from statebound.agents.budget import transitions_for
from statebound.agents.response_format import (
    ResponseFormat,
    code_block_grammar,
    thought_action_grammar,
)
from statebound.flow import CallLLM, CallTool, Flow, RunContext, State, always
from statebound.flow.history import Entry
from statebound.llm.base import Message

__all__ = ["build_plan_solve", "build_react", "plan_steps"]

_PLAN_ITEM = re.compile(r"^\s*(\d+)[.)]\s+(.+)$", re.MULTILINE)


def _observation(entry: Entry) -> str:
    return entry.data["observation"] if isinstance(entry.data, dict) else entry.content


def build_react(
    *, max_turns: int = 10, max_tokens: int = 256, response_format: ResponseFormat = "free"
) -> Flow:
    """Few-shot ReAct on one state; the model submits with ``Action n: submit``
    (``response_format="grammar"``: each reply constrained to ``... Action n: ...``)."""
    grammar = thought_action_grammar(numbered=True) if response_format == "grammar" else None

    def react_prompt(ctx: RunContext) -> list[Message]:
        replies = [e.content.strip() for e in ctx.history if e.source == "llm"]
        observations = [_observation(e) for e in ctx.history if e.source == "tool"]
        steps = (f"Thought {n}: {reply}\nObservation {n}: {seen}\n"
                 for n, (reply, seen) in enumerate(zip(replies, observations), 1))  # fmt: skip
        prompt = f"{prompts.REACT_INTRO}{prompts.REACT_DEMOS}Question: {ctx.task}\n{''.join(steps)}"
        return [Message("user", f"{prompt}Thought {len(observations) + 1}:")]

    react = State(
        "ReAct",
        outputs=[CallLLM(render=react_prompt, max_tokens=max_tokens, stop=("\nObservation",),
                         grammar=grammar),
                 CallTool(execute_reply, name="bash")],
        transitions=[(outcome_is("submit"), "End"), (always(), "ReAct")],
    )  # fmt: skip
    return Flow(
        name="react",
        initial="ReAct",
        states=[react, State("End", final=True)],
        max_turns=transitions_for(max_turns),
    )


def plan_steps(plan: str) -> list[str]:
    """The numbered items of a plan (``1. ...`` or ``1) ...``), in order."""
    return [match.group(2).strip() for match in _PLAN_ITEM.finditer(plan)]


def build_plan_solve(
    *, max_turns: int = 10, max_tokens: int = 256, response_format: ResponseFormat = "free"
) -> Flow:
    """Plan & Solve: a plan, then one command per step (at most ``max_turns``);
    ``response_format="grammar"`` makes each command a one-line code block (the plan stays free)."""
    grammar = code_block_grammar("bash") if response_format == "grammar" else None

    def question(ctx: RunContext) -> Message:
        return Message("user", f"Question: {ctx.task}")

    def steps(ctx: RunContext) -> list[str]:
        plan = next((e.content for e in ctx.history if e.state == "Plan" and e.source == "llm"), "")
        return plan_steps(plan) or [plan.strip() or ctx.task]  # an unnumbered plan is one step

    def solve_prompt(ctx: RunContext) -> list[Message]:
        plan = next(e.content for e in ctx.history if e.state == "Plan" and e.source == "llm")
        messages = [
            Message("system", prompts.PLAN_EXECUTE),
            question(ctx),
            Message("assistant", plan),
        ]
        observation: str | None = None
        done = 0
        for entry in ctx.history:
            if entry.state != "Solve":
                continue
            if entry.source == "llm":
                messages.append(Message("user", _step_message(observation, steps(ctx)[done])))
                messages.append(Message("assistant", entry.content))
                done += 1
            elif entry.source == "tool":
                observation = _observation(entry)
        messages.append(Message("user", _step_message(observation, steps(ctx)[done])))
        return messages

    def steps_left(ctx: RunContext) -> bool:
        done = sum(1 for e in ctx.history if e.state == "Solve" and e.source == "tool")
        return done < len(steps(ctx))

    states = [
        State("Plan", outputs=[CallLLM(max_tokens=max_tokens, render=lambda ctx: [
            Message("system", prompts.PLAN_INTRO), question(ctx)])],
              transitions=[(always(), "Solve")]),
        State("Solve", outputs=[CallLLM(render=solve_prompt, max_tokens=max_tokens, grammar=grammar),
                                CallTool(execute_code, name="bash")],
              transitions=[(steps_left, "Solve"), (always(), "End")]),
        State("End", final=True),
    ]  # fmt: skip
    return Flow(name="plan-solve", initial="Plan", states=states, max_turns=transitions_for(max_turns, outside=1))


def _step_message(observation: str | None, step: str) -> str:
    if observation is None:
        return f"Step: {step}"
    return f"Observation: {observation or 'No output'}\nStep: {step}"
