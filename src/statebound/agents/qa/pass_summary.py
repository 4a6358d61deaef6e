"""PASS's summary step in two variants (``-O summary=authors|statebound``).

- ``authors`` (default; IBM's ``ToolSetSummarizeHandler``, which produced the paper's numbers): the
  long summary prompt with five examples, statements one a line, a summary of at most 128 tokens
  ending at a newline, scores with alpha 0.3 (``ApiModel.score``), the raw results one a line, and
  a tie returns the raw results (``resp if summ_sc > obs_sc else obs_str``).
- ``statebound`` (our reading of the paper's section 3): a one-line instruction, statements joined
  by spaces, at most 96 tokens, alpha 0.6 (the usual GNMT value; the paper gives none), the raw
  results as a numbered list on one line, and a tie keeps the summary.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from statebound.agents.qa.authors_prompts import authors_summary_prompt
from statebound.agents.qa.prompts import SUMMARY_PROMPT, format_raw_results
from statebound.agents.qa.summary_choice import DEFAULT_ALPHA, PASS_ALPHA

__all__ = ["SUMMARY_VARIANTS", "SummaryName", "SummaryVariant"]

SummaryName = Literal["authors", "statebound"]


@dataclass(frozen=True, slots=True)
class SummaryVariant:
    """How one PASS step's summary is asked for and weighed against the raw results."""

    prompt: Callable[[Sequence[str], str, str], str]  # (statements, question, goal) -> prompt
    raw: Callable[[Sequence[str]], str]  # the raw results as returned to the agent
    max_tokens: int
    alpha: float
    tie: Literal["summary", "raw"]


def _statebound_prompt(statements: Sequence[str], question: str, goal: str) -> str:
    return SUMMARY_PROMPT.format(statements=" ".join(statements), question=question, goal=goal)


SUMMARY_VARIANTS: dict[str, SummaryVariant] = {
    "authors": SummaryVariant(authors_summary_prompt, "\n".join, max_tokens=128, alpha=PASS_ALPHA, tie="raw"),
    "statebound": SummaryVariant(_statebound_prompt, format_raw_results, max_tokens=96, alpha=DEFAULT_ALPHA, tie="summary"),
}
