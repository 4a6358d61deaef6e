"""The QA prompt texts of the PASS authors' code (IBM/llm-agent-framework), kept as data.

``data/prompts/ibm_qa_prompts.json`` holds, as their loader (``src/prompt.py``) cleans them: the
per-agent instructions and examples of ``data/prompts/hotpot_qa.py`` (six per agent; ``pass_list``
serves ``pass-no-summary``) and
``data/prompts/gsm8k_main.py``, the summary prompt of ``src/states/toolset.py``, ReWOO's solver prompt of
``src/states/solver.py``, the tool
descriptions of ``src/tools/*.py`` and the LLM tool's prompt (``scripts/extract_ibm_qa_prompts.py``
rebuilds it). The authors' monitor shows the model ``instructions``, a blank line, the examples
separated by blank lines, a newline, then the run (``constrained_decoding.py``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache
from importlib import resources
from typing import Any

__all__ = [
    "authors_agent_prompt",
    "authors_llm_tool_prompt",
    "authors_solver_prompt",
    "authors_summary_prompt",
    "has_authors_prompt",
]

_TOOLS = {"hotpotqa": ("Search", "Lookup"), "gsm8k": ("Calculator",)}
_NAMES = {"pass-no-summary": "pass_list"}  # the authors' prompt for PASS returning the raw list


@cache
def _data() -> dict[str, Any]:
    source = resources.files("statebound").joinpath("data", "prompts", "ibm_qa_prompts.json")
    return json.loads(source.read_text(encoding="utf-8"))


def has_authors_prompt(style: str, dataset: str) -> bool:
    """Whether the authors wrote a prompt for ``style`` on ``dataset`` (none for GSM8K Reflexion)."""
    return _NAMES.get(style, style) in _data().get(dataset, {})


def _tools(style: str, dataset: str) -> list[str]:
    """The tools the authors give an agent (``config._get_actions``: ReWOO on HotpotQA adds LLM)."""
    tools = list(_TOOLS[dataset])
    if dataset == "hotpotqa" and style == "rewoo":
        tools.append("LLM")
    return sorted(tools)


def authors_agent_prompt(style: str, dataset: str, *, shots: int | None = None) -> str:
    """Instructions and the first ``shots`` examples (all when ``None``), tool slots filled in."""
    entry = _data()[dataset][_NAMES.get(style, style)]
    descriptions = _data()["tools"]
    tools = _tools(style, dataset)
    instructions = (entry["instructions"]
                    .replace("{{tool_descriptions}}", "\n".join(f"{t}: {descriptions[t]}" for t in tools))
                    .replace("{{tool_labels}}", "[" + ", ".join(tools) + "]"))
    examples = entry["examples"] if shots is None else entry["examples"][:shots]
    return instructions + "\n\n" + "\n\n".join(examples) + "\n"


def authors_summary_prompt(statements: Sequence[str], question: str, goal: str) -> str:
    """``ToolSetSummarizeHandler``'s prompt: prefix, format, five examples, suffix, then the step's
    statements (one a line), the question as context and the plan step as goal."""
    summary = _data()["summary"]
    statements_text = "\n".join(statements)
    query = f"Statements: {statements_text}\nContext: {question}\nGoal: {goal}\nSummary:"
    return "\n\n".join(
        (summary["prefix"], summary["format"], "\n\n".join(summary["examples"]), summary["suffix"], query)
    )


def authors_llm_tool_prompt(instruction: str) -> str:
    """The prompt of the authors' ``LLM`` tool (ReWOO on HotpotQA) for one action input."""
    return _data()["llm_tool_prompt"].replace("{{action_input}}", instruction)


def authors_solver_prompt(question: str, steps: Sequence[tuple[str, str]]) -> str:
    """``SolverHandler``'s prompt (ReWOO): prefix, format, suffix, then the question and each
    ``(plan, evidence)`` step as ``Plan:`` and ``Evidence:`` lines, ending with ``Answer:``."""
    solver = _data()["solver"]
    lines = "".join(f"Plan: {plan}\nEvidence: {evidence}\n" for plan, evidence in steps)
    return "\n\n".join((solver["prefix"], solver["format"], solver["suffix"], f"Question: {question}\n{lines}Answer:"))
