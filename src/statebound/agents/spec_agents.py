"""Run any bundled spec as an agent over plain tools: ``{"Calculator": calculate, ...}``.

The benchmark-grade QA agents (gold-answer evaluators, PASS's summary choice, self-consistency)
live in :mod:`statebound.agents.qa`; this module is the small, generic way in: a mapping of tool
name -> ``callable(str) -> str`` becomes the handlers of the spec's ``:env-input`` states.

    result = await run_spec_agent("react", "What is 12 * 7?", llm=llm, mode="posthoc")
    result.content("Ans"), result.conforms, result.llm_calls
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Literal

from statebound.agents.qa.handlers import planned_actions, step_actions
from statebound.agents.qa.prompts import few_shot_prompt
from statebound.envs.qa.calculator import calculate
from statebound.errors import DefinitionError
from statebound.llm.base import LLM, Request
from statebound.spec import (
    CorrectionStyle,
    EnvHandler,
    EnvRequest,
    Mode,
    Monitor,
    MonitorConfig,
    MonitorResult,
    load_bundled,
)

__all__ = ["ANSWER_STATES", "Tool", "default_tools", "run_spec_agent", "tool_handlers"]

Tool = Callable[[str], str]
ANSWER_STATES: Mapping[str, str] = {"rewoo": "Solver"}  # every other bundled spec answers in Ans


def default_tools() -> dict[str, Tool]:
    """The calculator (an ``ast``-whitelist evaluator, never ``eval``)."""
    return {"Calculator": calculate}


def _run_tool(tools: Mapping[str, Tool], name: str, argument: str) -> str:
    tool = tools.get(name.strip())
    if tool is None:
        return f"Error: unknown tool {name.strip()!r}; use one of {', '.join(sorted(tools))}"
    return " ".join(str(tool(argument.strip())).split())


def tool_handlers(
    tools: Mapping[str, Tool], *, llm: LLM | None = None, evaluate: Callable[[str], bool] | None = None,
) -> dict[str, EnvHandler]:
    """Handlers for the bundled specs' environment states.

    ``Obs`` runs the last action; ``Sum`` (PASS, no summariser) lists the results of every action
    of the current plan step; ``Solver`` (ReWOO) runs the plan and asks ``llm`` for the answer;
    ``Eval`` (Reflexion) reports ``evaluate(proposed answer)``.
    """

    def observe(request: EnvRequest) -> str:
        calls = step_actions(request.segments)
        return _run_tool(tools, *calls[-1]) if calls else "Error: no [Action] to run"

    def summarize(request: EnvRequest) -> str:
        results = [_run_tool(tools, tool, arg) for tool, arg in step_actions(request.segments)]
        return " ".join(f"({i}) {r}" for i, r in enumerate(results, 1)) or "No actions were given."

    async def solve(request: EnvRequest) -> str:
        if llm is None:
            raise DefinitionError("ReWOO's Solver state needs llm= to write the answer")
        evidence = "\n".join(f"{label} = {_run_tool(tools, tool, arg)}  ({plan})"
                             for plan, label, tool, arg in planned_actions(request.segments))
        prompt = (f"Question: {request.task}\nEvidence:\n{evidence}\n"
                  "Answer the question in a few words, using the evidence.\nAnswer:")
        completion = await llm.complete(Request(prompt=prompt, max_tokens=32, stop=("\n",)))
        return completion.text.strip() or "unknown"

    def judge(request: EnvRequest) -> str:
        proposed = next((s.text.strip() for s in reversed(request.segments) if s.state == "Prop-Ans"), "")
        if evaluate is None:
            return "No evaluator is available; check the reasoning once more."
        return "Correct." if evaluate(proposed) else "Incorrect: reflect on what went wrong."

    return {"Obs": observe, "Sum": summarize, "Solver": solve, "Eval": judge}


async def run_spec_agent(
    name: str, question: str, *, llm: LLM, tools: Mapping[str, Tool] | None = None,
    mode: Mode = "posthoc", prompt: str | None = None,
    dataset: Literal["gsm8k", "hotpotqa"] = "gsm8k", evaluate: Callable[[str], bool] | None = None,
    chunk_tokens: int = 96, max_calls: int = 12, seed: int | None = None, correction: CorrectionStyle = "authors",
) -> MonitorResult:
    """Answer ``question`` with the bundled spec ``name`` (react, rewoo, reflexion, cot, direct, pass).

    ``prompt`` defaults to the agent's few-shot prompt for ``dataset``. The answer is
    ``result.content(ANSWER_STATES.get(name, "Ans"))``.
    """
    spec = load_bundled(name)
    handlers = tool_handlers(tools if tools is not None else default_tools(), llm=llm, evaluate=evaluate)
    used = {s.name for s in spec.env_states}
    config = MonitorConfig(mode=mode, chunk_tokens=chunk_tokens, max_calls=max_calls, seed=seed, correction=correction)
    monitor = Monitor(spec, llm=llm, env={k: v for k, v in handlers.items() if k in used}, config=config)
    text = prompt if prompt is not None else few_shot_prompt(name.lower(), dataset)
    return await monitor.run(question, prompt=text)
