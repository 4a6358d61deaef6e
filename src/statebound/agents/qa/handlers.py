"""What the environment writes in the QA specs' ``:env-input`` states.

- ``Obs`` (ReAct, Reflexion): run the last ``[Action]`` on its ``[Action Input]``.
- ``Eval`` (Reflexion): grade the ``[Proposed Answer]`` against the gold answer (Reflexion's
  exact-match evaluator on HotpotQA; numeric match on GSM8K).
- ``Sum`` (PASS): run the actions of the current plan step one after another (each sees the state
  the one before it left, as in the authors' ``ToolSetSummarizeHandler``: a Lookup reads the page a
  Search of the same step found), summarise their results with the same model, and return the
  summary or the raw list, whichever the model finds more likely (section 3; see :mod:`.pass_summary`).
- ``Solver`` (ReWOO): run every planned action (inputs may cite earlier ``#E`` labels; the ``LLM``
  tool of the authors' HotpotQA prompt asks the same model), then ask the model to answer from the
  plans and their evidence (the authors' ``SolverHandler`` prompt, or ours with ``prompts=statebound``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from statebound.agents.qa.authors_prompts import authors_llm_tool_prompt, authors_solver_prompt
from statebound.agents.qa.pass_summary import SUMMARY_VARIANTS, SummaryVariant
from statebound.agents.qa.prompts import EVALUATIONS, SOLVER_PROMPT, PromptSet
from statebound.agents.qa.summary_choice import choose_observation, score_continuation
from statebound.envs.qa.env import QAEnvironment, grade_answer
from statebound.llm.base import LLM, Message, Request, Usage
from statebound.spec.monitor import EnvRequest
from statebound.spec.results import Segment

__all__ = ["QAHandlers", "planned_actions", "step_actions"]

_LABEL = re.compile(r"#E\d+")
_SOLVER_TOKENS: dict[PromptSet, int] = {"authors": 128, "statebound": 48}  # the authors': LlmGenerationTool's
_LLM_TOOL_TOKENS = 128  # the authors' LlmGenerationTool


def _one_line(text: str) -> str:
    return " ".join(text.split())


def step_actions(segments: Sequence[Segment]) -> list[tuple[str, str]]:
    """``(tool, input)`` pairs written since the last ``Plan``/``Tht`` segment, in order."""
    pairs: list[tuple[str, str]] = []
    tool: str | None = None
    for segment in segments:
        if segment.state in ("Plan", "Tht"):
            pairs, tool = [], None
        elif segment.state == "Act":
            tool = segment.text.strip()
        elif segment.state == "Act-Inp" and tool is not None:
            pairs.append((tool, segment.text.strip()))
            tool = None
    return pairs


def planned_actions(segments: Sequence[Segment]) -> list[tuple[str, str, str, str]]:
    """ReWOO's plan as ``(plan, label, tool, input)`` rows, in order."""
    rows: list[tuple[str, str, str, str]] = []
    current: dict[str, str] = {}
    for segment in segments:
        if segment.state == "Plan":
            current = {"Plan": segment.text.strip()}
        elif segment.state in ("Act-Lbl", "Act"):
            current[segment.state] = segment.text.strip()
        elif segment.state == "Act-Inp":
            label = current.get("Act-Lbl") or f"#E{len(rows) + 1}"
            rows.append((current.get("Plan", ""), label, current.get("Act", ""), segment.text.strip()))
    return rows


@dataclass
class QAHandlers:
    """Handlers for one episode; ``usage`` and ``details`` collect the extra calls they make.

    ``details`` holds one list of trajectory entries per handler call, in call order (tool calls,
    PASS's summary and choice, ReWOO's solver answer).
    """

    env: QAEnvironment
    llm: LLM
    prompt: str  # the agent's few-shot prompt: PASS scores continuations of prompt + transcript
    summarize: bool = True
    summary: SummaryVariant = SUMMARY_VARIANTS["authors"]
    alpha: float | None = None  # PASS's length penalty; None: the summary variant's
    prompts: PromptSet = "authors"  # whose texts Reflexion's evaluation and ReWOO's solver use
    usage: Usage = field(default_factory=Usage)
    details: list[list[dict[str, Any]]] = field(default_factory=list)
    choices: dict[str, int] = field(default_factory=lambda: {"summary": 0, "raw": 0})
    _state: str = field(default="", init=False, repr=False)

    def table(self) -> dict[str, Any]:
        """The ``env=`` mapping for :class:`~statebound.spec.monitor.Monitor`."""
        return {"Obs": self.observe, "Eval": self.evaluate, "Sum": self.summarize_step, "Solver": self.solve}

    async def _ask(self, text: str, *, max_tokens: int) -> str:
        if self.llm.capabilities.completion:
            request = Request(prompt=text, max_tokens=max_tokens, stop=("\n",), temperature=0.0)
        else:
            request = Request(messages=(Message("user", text),), max_tokens=max_tokens, temperature=0.0)
        completion = await self.llm.complete(request)
        self.usage = self.usage + completion.usage
        return _one_line(completion.text.strip().split("\n")[0]) if completion.text.strip() else ""

    def _begin(self, request: EnvRequest) -> None:
        self.details.append([])
        self._state = request.state

    def _note(self, role: str, content: str, **extra: Any) -> None:
        self.details[-1].append({"state": self._state, "role": role, "content": content, **extra})

    def _act(self, tool: str, argument: str) -> str:
        result = self.env.call(tool, argument)
        observation = _one_line(result.observation)
        self._note("tool", observation, action=f"{tool}[{argument}]", ok=result.ok)
        return observation

    # -- the handlers ---------------------------------------------------------------------------
    def observe(self, request: EnvRequest) -> str:
        self._begin(request)
        calls = step_actions(request.segments)
        if not calls:
            return "Invalid action: write [Action] with a tool name and [Action Input] with its input."
        return self._act(*calls[-1])

    def evaluate(self, request: EnvRequest) -> str:
        self._begin(request)
        proposed = next((s.text.strip() for s in reversed(request.segments) if s.state == "Prop-Ans"), "")
        score = grade_answer(proposed or None, self.env.item.answer, kind=self.env.kind)
        correct, incorrect = EVALUATIONS[self.prompts]
        return correct if score.success else incorrect

    async def summarize_step(self, request: EnvRequest) -> str:
        self._begin(request)
        calls = step_actions(request.segments)
        if not calls:
            return "No actions were given: write [Action] and [Action Input] after the plan."
        observations = [self._act(tool, argument) for tool, argument in calls]
        variant = self.summary
        raw = variant.raw(observations)
        if not self.summarize:
            return raw
        goal = next((s.text.strip() for s in reversed(request.segments) if s.state == "Plan"), "")
        summary = await self._ask(variant.prompt(observations, request.task, goal), max_tokens=variant.max_tokens)
        context = self.prompt + request.transcript + " "
        scored_summary = await score_continuation(self.llm, context, summary)
        scored_raw = await score_continuation(self.llm, context, raw)
        self.usage = self.usage + scored_summary.usage + scored_raw.usage
        alpha = variant.alpha if self.alpha is None else self.alpha
        choice = choose_observation(summary, scored_summary.logprobs, raw, scored_raw.logprobs,
                                    alpha=alpha, tie=variant.tie)
        self.choices[choice.returned] += 1
        self._note("assistant", summary, kind="summary", returned=choice.returned,
                   summary_score=choice.summary_score, raw_score=choice.raw_score)
        return choice.text

    async def solve(self, request: EnvRequest) -> str:
        self._begin(request)
        rows = planned_actions(request.segments)
        evidence: dict[str, str] = {}
        lines, steps = [], []
        for plan, label, tool, argument in rows:
            resolved = _LABEL.sub(lambda m: evidence.get(m.group(), m.group()), argument)
            if tool == "LLM":
                evidence[label] = await self._ask(authors_llm_tool_prompt(resolved), max_tokens=_LLM_TOOL_TOKENS)
                self._note("tool", evidence[label], action=f"{tool}[{resolved}]", ok=True)
            else:
                evidence[label] = self._act(tool, resolved)
            lines.append(f"Plan: {plan}\n{label} = {tool}[{resolved}]: {evidence[label]}")
            steps.append((_LABEL.sub(lambda m: evidence.get(m.group(), m.group()), plan), evidence[label]))
        if self.prompts == "authors":  # src/states/solver.py
            prompt = authors_solver_prompt(request.task, steps)
        else:
            prompt = SOLVER_PROMPT.format(plans="\n".join(lines), question=request.task)
        answer = await self._ask(prompt, max_tokens=_SOLVER_TOKENS[self.prompts])
        self._note("assistant", answer, kind="solver")
        return answer or "unknown"
