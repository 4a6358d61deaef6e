"""Prompts for the QA agents, from one of two sets (``-O prompts=authors|statebound``):

- ``authors`` (default): the PASS authors' per-agent instructions and examples (six per agent on
  HotpotQA; GSM8K: eight for Direct/CoT, one for the tool agents), see :mod:`.authors_prompts`;
  GSM8K Reflexion, which they did not write, falls back to ours.
- ``statebound``: our own instruction naming the tools, then few-shot examples written in the
  agent's markers (``[Question]``, ``[Thought]``, ``[Action]``, ... as in the paper's specs).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

from statebound.agents.qa.authors_prompts import authors_agent_prompt, has_authors_prompt
from statebound.agents.qa.examples import (
    Example,
    gsm8k_examples,
    hotpot_examples,
    hotpot_pass_examples,
)
from statebound.errors import DefinitionError

__all__ = [
    "AGENT_STYLES",
    "EVALUATIONS",
    "SOLVER_PROMPT",
    "SUMMARY_PROMPT",
    "TOOL_HELP",
    "Dataset",
    "PromptSet",
    "few_shot_prompt",
    "format_raw_results",
    "render_example",
]

Dataset = Literal["hotpotqa", "gsm8k"]
PromptSet = Literal["authors", "statebound"]

TOOL_HELP: dict[Dataset, str] = {
    "hotpotqa": (
        "Tools:\n"
        "- Search: give an entity; returns the first sentences of its Wikipedia page if it exists, "
        "otherwise similar entities to search instead.\n"
        "- Lookup: give a keyword; returns the next sentence containing it in the last page searched.\n"
    ),
    "gsm8k": "Tools:\n- Calculator: give an arithmetic expression (numbers, + - * / and parentheses); returns its value.\n",
}

_INSTRUCTIONS = {
    "direct": "Answer the question directly, with only the answer after [Answer].\n",
    "cot": "Think step by step after [Thought], then give only the final answer after [Answer].\n",
    "react": "Solve the question by interleaving [Thought], [Action] and [Action Input] steps; the tool's "
    "reply comes after [Observation]. When you know the answer, write [Final Thought] then [Answer].\n",
    "reflexion": "Solve the question by interleaving [Thought], [Action] and [Action Input] steps; the tool's "
    "reply comes after [Observation]. Then give a [Proposed Answer]; it is evaluated, you write a "
    "[Reflection], and either try again or give the final [Answer].\n",
    "rewoo": "Make a plan to solve the question. For each [Plan] step write an [Action Label] (#E1, #E2, "
    "...), an [Action] and an [Action Input]; an input may use earlier labels. The actions are run for "
    "you and the answer is written after [Answer].\n",
    "pass": "Solve the question in rounds. In each round write a plan after [Thought], then the independent "
    "actions it needs, each as [Action] and [Action Input]; they run together and their results come "
    "back after [Summary]. When you know the answer, write [Final Thought] then [Answer].\n",
}
AGENT_STYLES = tuple(_INSTRUCTIONS)

SUMMARY_PROMPT = (
    "Summarize the statements with respect to the context and goal, in one or two sentences.\n"
    "Statements: {statements}\nContext: {question}\nGoal: {goal}\nSummary:"
)
# Reflexion's [Evaluation] (correct, incorrect) per prompt set; the authors' is src/states/evaluator.py's
EVALUATIONS: dict[PromptSet, tuple[str, str]] = {
    "authors": ("Correct", "Incorrect"),
    "statebound": ("The proposed answer is correct.", "The proposed answer is incorrect."),
}
SOLVER_PROMPT = (
    "Solve the task using the plans and the evidence gathered for them. Give only the answer.\n"
    "{plans}\nTask: {question}\nAnswer:"
)


def format_raw_results(observations: Sequence[str]) -> str:
    """The raw action results as a numbered list (what ``pass-no-summary`` returns)."""
    return " ".join(f"{i}. {text.strip()}" for i, text in enumerate(observations, start=1))


def _react(example: Example, *, reflexion: bool = False) -> str:
    lines = [f"[Question] {example.question}"]
    for step in example.steps:
        for number, act in enumerate(step.acts):
            thought = step.thought if number == 0 else f"I also need to use {act.tool} on {act.argument}."
            lines += [f"[Thought] {thought}", f"[Action] {act.tool}", f"[Action Input] {act.argument}",
                      f"[Observation] {act.observation}"]
    lines.append(f"[Final Thought] {example.final_thought}")
    if reflexion:
        lines += [
            f"[Proposed Answer] {example.answer}",
            "[Evaluation] The proposed answer is correct.",
            "[Reflection] The evidence supports the proposed answer, so I keep it.",
        ]
    lines.append(f"[Answer] {example.answer}")
    return "\n".join(lines)


def _pass(example: Example) -> str:
    lines = [f"[Question] {example.question}"]
    for step in example.steps:
        lines.append(f"[Thought] {step.thought}")
        for act in step.acts:
            lines += [f"[Action] {act.tool}", f"[Action Input] {act.argument}"]
        lines.append(f"[Summary] {step.summary or format_raw_results([a.observation for a in step.acts])}")
    lines += [f"[Final Thought] {example.final_thought}", f"[Answer] {example.answer}"]
    return "\n".join(lines)


def _rewoo(example: Example) -> str:
    lines = [f"[Question] {example.question}"]
    label = 0
    for step in example.steps:
        for act in step.acts:
            label += 1
            lines += [f"[Plan] {step.thought}", f"[Action Label] #E{label}", f"[Action] {act.tool}",
                      f"[Action Input] {act.argument}"]
    lines.append(f"[Answer] {example.answer}")
    return "\n".join(lines)


_RENDERERS: dict[str, Callable[[Example], str]] = {
    "direct": lambda e: f"[Question] {e.question}\n[Answer] {e.answer}",
    "cot": lambda e: f"[Question] {e.question}\n[Thought] {e.reasoning or e.final_thought}\n[Answer] {e.answer}",
    "react": _react,
    "reflexion": lambda e: _react(e, reflexion=True),
    "rewoo": _rewoo,
    "pass": _pass,
}


def render_example(style: str, example: Example) -> str:
    """One worked example in the markers of ``style`` (direct, cot, react, reflexion, rewoo, pass)."""
    try:
        return _RENDERERS[style](example)
    except KeyError:
        raise DefinitionError(f"unknown agent style {style!r}; choose from {', '.join(AGENT_STYLES)}") from None


def _examples(style: str, dataset: Dataset) -> tuple[Example, ...]:
    if dataset == "gsm8k":
        return gsm8k_examples()
    return hotpot_pass_examples() if style == "pass" else hotpot_examples()


def few_shot_prompt(
    style: str, dataset: Dataset, *, shots: int | None = None, tools: bool = True, source: PromptSet = "authors"
) -> str:
    """The agent's prompt from ``source``: instructions and the first ``shots`` examples (all when
    ``None``). Ours ends with a blank line; the authors' as their monitor builds it."""
    if dataset not in TOOL_HELP:
        raise DefinitionError(f"unknown dataset {dataset!r}; choose hotpotqa or gsm8k")
    if shots is not None and shots < 0:
        raise DefinitionError("shots must be 0 or more")
    if source == "authors" and has_authors_prompt(style, dataset):
        return authors_agent_prompt(style, dataset, shots=shots)
    style = "pass" if style == "pass-no-summary" else style  # ours has one PASS prompt
    header = render_instruction(style)
    if tools and style not in ("direct", "cot"):
        header += TOOL_HELP[dataset]
    examples = [render_example(style, e) for e in _examples(style, dataset)[:shots]]
    return header + "\n" + "".join(f"{text}\n\n" for text in examples)


def render_instruction(style: str) -> str:
    if style not in _INSTRUCTIONS:
        raise DefinitionError(f"unknown agent style {style!r}; choose from {', '.join(AGENT_STYLES)}")
    return _INSTRUCTIONS[style]
