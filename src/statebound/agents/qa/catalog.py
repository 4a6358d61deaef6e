"""The QA agents as the ``gsm8k`` and ``hotpotqa`` benchmarks offer them (registered by entry point):
every style of :mod:`statebound.agents.qa.agents` and the ``A->B`` hybrids."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from statebound.agents.qa.agents import (
    HYBRIDS,
    NON_AGENT_STYLES,
    STYLES,
    QAAgentOptions,
    parse_agent,
    run_agent,
)
from statebound.agents.qa.scoped import ScopedQAAgent, build_scoped
from statebound.agents.qa.scoped_arithmetic import build_scoped_arithmetic
from statebound.contract.benchmark import AgentSpec, Setup
from statebound.contract.trace import Trace
from statebound.envs.qa.env import QAEnvironment
from statebound.errors import DefinitionError
from statebound.flow import Flow
from statebound.llm.base import LLM

if TYPE_CHECKING:
    from statebound.agents.qa.options import HotpotOptions, QAOptions

__all__ = ["GSM8K_AGENTS", "HOTPOTQA_AGENTS", "QAAgent"]

_SUMMARIES = {
    "direct": "answers at once (spec Direct)",
    "cot": "thinks, then answers; self-consistency over k samples (spec CoT)",
    "react": "thought, action, observation (spec ReAct)",
    "rewoo": "plans every tool call, then solves (spec ReWOO)",
    "reflexion": "answers, evaluates, reflects (spec Reflexion)",
    "pass": "parallel actions, summary or raw results by score (spec PASS)",
    "pass-no-summary": "PASS without its summaries",
}


@dataclass(frozen=True, slots=True)
class QAAgent:
    """A named QA agent (a style or a hybrid) run under the decoding monitor."""

    name: str
    options: QAAgentOptions
    seed: int

    async def __call__(self, task: str, *, llm: LLM, env: QAEnvironment) -> Trace:
        attempt = await run_agent(self.name, task, llm=llm, env=env, options=self.options, seed=self.seed)
        last = attempt.trace[-1].state if attempt.trace else None
        return Trace(entries=attempt.trace, exit=attempt.exit, exit_state=last, answer=attempt.answer,
                     usage=attempt.usage, meta=attempt.meta)


def _needs_tools(name: str) -> bool:
    return any(style not in NON_AGENT_STYLES for style in parse_agent(name) if style)


def _check_tools(name: str, options: HotpotOptions) -> None:
    if _needs_tools(name) and not options.with_tools:
        raise DefinitionError(f"hotpotqa split=dev has no tools: it runs only {', '.join(NON_AGENT_STYLES)}; "
                              f"{name!r} needs tools (use split=distractor, or corpus=PATH)")


def _agent(name: str, dataset: str, *, check_tools: bool) -> AgentSpec[QAOptions]:
    first, second = parse_agent(name)
    summary = _SUMMARIES[first] if second is None else f"{first} sampled k times; {second} when no answer repeats"

    def build(setup: Setup[QAOptions]) -> QAAgent:
        return QAAgent(name, setup.options.agent_options(dataset), setup.seed)  # type: ignore[arg-type]

    check = (lambda options: _check_tools(name, options)) if check_tools else None
    return AgentSpec(build=build, summary=summary, check=check)  # type: ignore[arg-type]


def _needs_pages(options: HotpotOptions) -> None:
    if not options.with_tools:
        raise DefinitionError("the scoped machine reads pages: use split=distractor, or corpus=PATH")


def _scoped(build_flow: Callable[..., Flow], summary: str, *, control: bool,
            check: Callable[[Any], None] | None = None) -> AgentSpec[QAOptions]:
    """A scoped machine choosing with ``-O choice=`` (seeded random draws for the ``control``)."""

    def build(setup: Setup[QAOptions]) -> ScopedQAAgent:
        return ScopedQAAgent(build_flow(chooser="random" if control else setup.options.choice))

    return AgentSpec(build=build, summary=summary, check=check, chooses=not control)  # type: ignore[arg-type]


_RANDOM_CONTROL = "extension: stateflow-scoped with seeded random picks (the control)"
GSM8K_AGENTS = {
    **{name: _agent(name, "gsm8k", check_tools=False) for name in STYLES + HYBRIDS},
    "stateflow-scoped": _scoped(build_scoped_arithmetic, "extension: the model picks each calculation among "
                                "those on two of the problem's quantities; the Calculator computes it", control=False),
    "stateflow-scoped-random": _scoped(build_scoped_arithmetic, _RANDOM_CONTROL, control=True),
}
HOTPOTQA_AGENTS = {
    **{name: _agent(name, "hotpotqa", check_tools=True) for name in STYLES + HYBRIDS},
    "stateflow-scoped": _scoped(build_scoped, "extension: the model picks the next page and the answer among "
                                "what Search supplies (yes/no, one of two named things, a span of the pages)",
                                control=False, check=_needs_pages),
    "stateflow-scoped-random": _scoped(build_scoped, _RANDOM_CONTROL, control=True, check=_needs_pages),
}
