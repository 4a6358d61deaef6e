"""PASS's choice between the summary and the raw action results (paper, section 3).

The text returned to the agent is ``argmax_{y in {s, o}} sum_i log p(y_i | x, y_<i) / lp(|y|)`` with
the GNMT length penalty ``lp(n) = (5 + n)^alpha / (5 + 1)^alpha`` (Wu et al. 2016), where ``x`` is
the agent's context so far, ``s`` the summary and ``o`` the raw results as a list. The authors' code
(IBM's ``ApiModel.score``) uses ``alpha = 0.3`` (:data:`PASS_ALPHA`) and returns the raw results
on a tie; ``-O summary=statebound`` keeps the summary on a tie (see :mod:`.pass_summary`).

:func:`choose_observation` is the pure decision; :func:`score_continuation` asks the model for the
log-probabilities of a given text after a context, by forcing decoding to that text with a GBNF
literal grammar and reading the per-token log-probs (``Request(logprobs=True)``); backends report
the model's own distribution there, before the grammar masks it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from statebound.errors import UnsupportedFeature
from statebound.llm.base import LLM, Request, Usage
from statebound.llm.scoring import DEFAULT_ALPHA, length_penalty, normalized_score

PASS_ALPHA = 0.3  # the authors' (IBM llm-agent-framework, src/api_models.py ApiModel.score)

__all__ = [
    "DEFAULT_ALPHA",
    "PASS_ALPHA",
    "ScoredText",
    "SummaryChoice",
    "choose_observation",
    "length_penalty",
    "literal_grammar",
    "normalized_score",
    "require_scoring",
    "score_continuation",
]


@dataclass(frozen=True, slots=True)
class SummaryChoice:
    """Which text goes back to the agent, and both scores (for traces and reports)."""

    returned: Literal["summary", "raw"]
    text: str
    summary_score: float
    raw_score: float


def choose_observation(
    summary: str,
    summary_logprobs: Sequence[float],
    raw: str,
    raw_logprobs: Sequence[float],
    *,
    alpha: float = PASS_ALPHA,
    tie: Literal["summary", "raw"] = "raw",
) -> SummaryChoice:
    """The argmax of the length-normalised log-probability; a tie returns ``tie``."""
    s_score = normalized_score(summary_logprobs, alpha=alpha)
    o_score = normalized_score(raw_logprobs, alpha=alpha)
    if s_score > o_score or (s_score == o_score and tie == "summary"):
        return SummaryChoice("summary", summary, s_score, o_score)
    return SummaryChoice("raw", raw, s_score, o_score)


def literal_grammar(text: str) -> str:
    """A GBNF grammar whose only sentence is ``text``."""
    escaped = (
        text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    )
    return f'root ::= "{escaped}"'


@dataclass(frozen=True, slots=True)
class ScoredText:
    """Per-token log-probabilities of a text under the model, and what scoring it cost."""

    logprobs: tuple[float, ...]
    usage: Usage


def require_scoring(llm: LLM) -> None:
    """Raise :class:`UnsupportedFeature` unless ``llm`` can score a given continuation."""
    caps = llm.capabilities
    if not (caps.scoring or (caps.completion and caps.grammar and caps.logprobs)):
        raise UnsupportedFeature(
            f"{llm.model} cannot score a given text (needs completion + grammar + logprobs); "
            "run PASS on a local model (llama.cpp), or use the 'pass-no-summary' agent"
        )


async def score_continuation(llm: LLM, context: str, text: str) -> ScoredText:
    """Log-probabilities of ``text`` continuing ``context`` under ``llm``.

    A backend that scores text (``capabilities.scoring``: the embedded llama.cpp backend) reads
    them from one evaluation of context and text; one that continues plain text with a grammar and
    reports log-probabilities gets the text forced through its sampler, a decoding step per token.
    Others raise :class:`UnsupportedFeature`.
    """
    if not text:
        return ScoredText((), Usage())
    require_scoring(llm)
    if llm.capabilities.scoring:
        request = Request(prompt=context, score=text, logprobs=True)
    else:
        request = Request(
            prompt=context,
            grammar=literal_grammar(text),
            max_tokens=len(text.encode("utf-8")) + 2,  # a token covers at least one byte
            temperature=0.0,
            logprobs=True,
        )
    completion = await llm.complete(request)
    choice = completion.choices[0]
    if choice.logprobs is None:
        raise UnsupportedFeature(f"{llm.model} returned no log-probabilities for a logprobs request")
    return ScoredText(tuple(t.logprob for t in choice.logprobs), completion.usage)
