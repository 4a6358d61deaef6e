"""The QA agents on the bundled specs, run by the decoding monitor, plus self-consistency and hybrids.

Agent names: ``direct``, ``cot`` (self-consistency over ``k`` samples at temperature 0.7, the
paper's setting; ``k=1`` is one greedy answer), ``react``, ``rewoo``, ``reflexion``, ``pass`` and
``pass-no-summary`` (greedy), and hybrids ``A->B`` for any two of them: ``A`` is sampled ``k``
times and ``B`` runs only when no answer repeats (``cot->pass``).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from functools import cache
from importlib import resources

from statebound.agents.qa.consistency import (
    SC_SAMPLES,
    SC_TEMPERATURE,
    Attempt,
    hybrid,
    self_consistency,
)
from statebound.agents.qa.handlers import QAHandlers
from statebound.agents.qa.pass_summary import SUMMARY_VARIANTS, SummaryName
from statebound.agents.qa.prompts import Dataset, PromptSet, few_shot_prompt
from statebound.agents.qa.summary_choice import require_scoring
from statebound.contract.converters import trace_of_monitor
from statebound.envs.qa.env import QAEnvironment
from statebound.envs.qa.scoring import extract_final_number, normalize_answer
from statebound.errors import DefinitionError
from statebound.llm.base import LLM
from statebound.spec.model import Spec
from statebound.spec.monitor import CorrectionStyle, Mode, Monitor, MonitorConfig
from statebound.spec.parser import parse

__all__ = [
    "HYBRIDS",
    "NON_AGENT_STYLES",
    "STYLES",
    "TOOL_STYLES",
    "QAAgentOptions",
    "answer_key",
    "bundled_spec",
    "parse_agent",
    "run_agent",
    "run_style",
]

NON_AGENT_STYLES = ("direct", "cot")
TOOL_STYLES = ("react", "rewoo", "reflexion", "pass", "pass-no-summary")
STYLES = NON_AGENT_STYLES + TOOL_STYLES
HYBRIDS = tuple(f"{a}->{b}" for a in NON_AGENT_STYLES for b in ("react", "rewoo", "pass"))
_ANSWER_STATES = {"rewoo": ("Solver",), "reflexion": ("Ans", "Prop-Ans")}


@dataclass(frozen=True, kw_only=True)
class QAAgentOptions:
    """How the QA agents run; every field has the paper's value or a small-model default."""

    dataset: Dataset
    shots: int | None = None  # few-shot examples in the prompt; None: all of the set's (the authors': 6 on HotpotQA)
    prompts: PromptSet = "authors"  # the authors' prompt texts or ours
    summary: SummaryName = "authors"  # PASS's summary step: the authors' code or our reading of the paper
    mode: Mode = "posthoc"  # the monitor mode
    correction: CorrectionStyle = "authors"  # how the monitor corrects: IBM's monitor or the paper's section 2.2
    chunk_tokens: int = 128
    max_calls: int = 10  # model calls per run before the monitor wraps up
    k: int = SC_SAMPLES
    sample_temperature: float = SC_TEMPERATURE
    alpha: float | None = None  # PASS's length penalty; None: the summary variant's (authors 0.3, statebound 0.6)


@cache
def bundled_spec(style: str) -> Spec:
    """The bundled spec an agent style runs on (``pass-no-summary`` runs the PASS spec)."""
    name = "pass" if style == "pass-no-summary" else style
    source = resources.files("statebound").joinpath("spec", "bundled", f"{name}.spec")
    return parse(source.read_text(encoding="utf-8"), source_name=f"{name}.spec")


def parse_agent(name: str) -> tuple[str, str | None]:
    """``"cot->pass"`` -> ``("cot", "pass")``; ``"react"`` -> ``("react", None)``."""
    first, arrow, second = (part.strip() for part in name.partition("->"))
    for style in (first, second) if arrow else (first,):
        if style not in STYLES:
            raise DefinitionError(
                f"unknown QA agent {style!r} in {name!r}; use one of {', '.join(STYLES)} or 'A->B' hybrids"
            )
    return first, (second if arrow else None)


def answer_key(dataset: Dataset, answer: str) -> Hashable:
    """What self-consistency votes on: the final number (GSM8K) or the normalised answer."""
    if dataset == "gsm8k":
        number = extract_final_number(answer)
        if number is not None:
            return number.normalize()
    return normalize_answer(answer)


def _answer(style: str, segments: dict[str, str]) -> str | None:
    for state in _ANSWER_STATES.get(style, ("Ans",)):
        if segments.get(state):
            return segments[state]
    return None


async def run_style(
    style: str,
    question: str,
    *,
    llm: LLM,
    env: QAEnvironment,
    options: QAAgentOptions,
    temperature: float = 0.0,
    seed: int | None = None,
) -> Attempt:
    """One run of one agent style on ``question`` under the decoding monitor."""
    spec = bundled_spec(style)
    prompt = few_shot_prompt(style, options.dataset, shots=options.shots, source=options.prompts)
    handlers = QAHandlers(env, llm, prompt, summarize=style != "pass-no-summary", alpha=options.alpha,
                          summary=SUMMARY_VARIANTS[options.summary], prompts=options.prompts)
    config = MonitorConfig(
        mode=options.mode,
        correction=options.correction,
        chunk_tokens=options.chunk_tokens,
        max_calls=options.max_calls,
        temperature=temperature,
        seed=seed,
    )
    result = await Monitor(spec, llm=llm, env=handlers.table(), config=config).run(question, prompt=prompt)
    last = {segment.state: segment.text.strip() for segment in result.segments}
    trace = trace_of_monitor(spec, result, details=handlers.details)
    steered = [c for c in result.corrections if c.reason != "boundary"]
    meta = {
        "violations": len(result.violations),
        "corrections": len(steered),
        "env_calls": result.env_calls,
        "nonconforming": int(not result.conforms),
        "incomplete": int(not result.completed),
        "context_overflow": int(result.stop_reason == "context"),
        "summaries_returned": handlers.choices["summary"],
        "raw_returned": handlers.choices["raw"],
    }
    return Attempt(
        answer=_answer(style, last),
        usage=result.usage + handlers.usage,
        text=result.transcript,
        meta=meta,
        trace=trace.entries,
        exit=trace.exit,
    )


async def run_agent(
    name: str, question: str, *, llm: LLM, env: QAEnvironment, options: QAAgentOptions, seed: int = 0
) -> Attempt:
    """Run a named agent: a style, a self-consistent non-agent method, or an ``A->B`` hybrid."""
    first, fallback = parse_agent(name)
    if "pass" in (first, fallback):
        require_scoring(llm)
    if first in TOOL_STYLES and not env.tool_names:
        raise DefinitionError(f"agent {name!r} needs tools; this benchmark split has none (use direct or cot)")

    def key(answer: str) -> Hashable:
        return answer_key(options.dataset, answer)

    async def sample(index: int) -> Attempt:
        return await run_style(first, question, llm=llm, env=env, options=options,
                               temperature=options.sample_temperature, seed=seed * 1000 + index)

    concurrent = first in NON_AGENT_STYLES  # tool agents share the episode's environment
    if fallback is not None:
        if fallback in TOOL_STYLES and not env.tool_names:
            raise DefinitionError(f"agent {name!r} needs tools; this benchmark split has none")

        async def run_fallback() -> Attempt:
            return await run_style(fallback, question, llm=llm, env=env, options=options, seed=seed)

        return await hybrid(sample, run_fallback, k=options.k, key=key, concurrent=concurrent)
    if first in NON_AGENT_STYLES and options.k > 1:
        attempt, _ = await self_consistency(sample, k=options.k, key=key, concurrent=concurrent)
        return attempt
    return await run_style(first, question, llm=llm, env=env, options=options, seed=seed)
