"""``stateflow-scoped`` for HotpotQA: the model never writes; it picks, among what the pages
supply, the next page to read and the answer (our extension; ``stateflow-scoped-random`` makes
the same picks by seeded random draws, the control).

The question's words decide the route (:mod:`statebound.agents.qa.scoped_reading`); the
environment's Search supplies every candidate:

- ``Read`` searches the whole question (its similar titles are pages a bridge may lead to) and
  each thing the question names;
- a yes/no question goes to ``YesNo`` (``yes`` or ``no``), a question choosing between two named
  things to ``Either`` (one of the two), any other to ``Links``: it searches the names on the
  pages read, and those that are pages (the links) join the similar titles; ``Page`` picks the
  next page to read among them, links first; ``Open`` searches it;
- ``Answer`` picks among the answer-like spans (dates, names, numbers, of the kind the question
  asks for) that the question does not already contain: those of the page opened (a bridge's
  answer is on the page it leads to), or of the pages read when none was opened;
- ``Finish`` gives the pick to the environment as the answer.

What the run has read is its typed state (:class:`Research`, the flow variables): the tools write
the pages, links and similar titles they find, the picks the page to open and the answer; the
route is decided by named conditions on the question and that state.

Each pick is scored after the pages read and the question, calibrated by the same prompt with the
question left out (``Pick(baseline=...)``): what the question adds to a candidate, not how
likely the pages make it anyway.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from statebound.agents.qa.scoped_reading import (
    alternatives,
    answer_kind,
    answer_spans,
    named_things,
    spans_of_kind,
)
from statebound.contract.converters import trace_of_flow
from statebound.contract.trace import Trace
from statebound.envs.qa.env import FINISH, QAEnvironment
from statebound.flow import (
    CallTool,
    ChoiceMethod,
    Flow,
    Pick,
    Rule,
    RunContext,
    State,
    ToolResult,
    always,
)
from statebound.llm.base import LLM, Message

__all__ = ["SYSTEM", "Research", "ScopedQAAgent", "answer_candidates", "build_scoped", "find_links", "next_titles",
           "opened_page", "page_candidates", "pages_read"]

SYSTEM = "Answer the question from the pages. Answer with one item only."
MAX_NAMED = 4  # things the question names that Read searches
MAX_LINKS = 12  # names of each page read that Links searches
MAX_NEXT_PAGES = 6  # pages offered to read next
MAX_SPANS = 40  # answer candidates offered
PAGE_CHARS = 600  # of each page shown in a prompt
_NOT_FOUND = "Could not find"
_SIMILAR = re.compile(r"Similar: (\[.*\])\.?\s*$", re.DOTALL)


# -- what the run has read: the machine's flow variables ---------------------------------------
@dataclass(frozen=True, slots=True)
class Research:
    """What the run has read (``Flow(vars=Research)``): written by the tools and the picks."""

    pages: dict[str, str] = field(default_factory=dict)  # every page found, title to text, in the order read
    similar: tuple[str, ...] = ()  # titles Search offered for what it could not find, best first
    links: tuple[str, ...] = ()  # names on the pages read that are pages
    page: str | None = None  # the page picked to read next
    opened: str = ""  # the title of the page Open found ("" when none)
    answer: str | None = None  # the answer picked


def _found(now: Research, pages: list[list[str]]) -> dict[str, str]:
    return {**now.pages, **{title: text for title, text in pages}}


def pages_read(ctx: RunContext[Research]) -> dict[str, str]:
    """Every page found so far, title to text, in the order read."""
    return ctx.vars.pages


def next_titles(ctx: RunContext[Research]) -> list[str]:
    """The pages the run may read next: the links found, then the titles Search offered as
    similar to what it could not find, best first."""
    return list(dict.fromkeys([*ctx.vars.links, *ctx.vars.similar]))


# -- tools: the environment's side -------------------------------------------------------------
def _search(env: QAEnvironment, query: str) -> tuple[list[list[str]], list[str]]:
    """Search ``query``: the page found (``[[title, text]]``) or the similar titles offered
    (neither once the environment refuses: its action limit is reached)."""
    result = env.call("Search", query)
    observation = result.observation
    if not result.ok:
        return [], []
    if not observation.startswith(_NOT_FOUND):
        return [[env.page_title or query, observation]], []
    match = _SIMILAR.search(observation)
    try:
        similar = ast.literal_eval(match.group(1)) if match else []
    except (ValueError, SyntaxError):
        similar = []
    return [], [str(title) for title in similar]


def read_question(ctx: RunContext) -> ToolResult:
    """Search the question itself (for similar titles), then each thing it names."""
    pages: list[list[str]] = []
    similar: list[str] = []
    for query in [ctx.task, *named_things(ctx.task)[:MAX_NAMED]]:
        found, offered = _search(ctx.deps, query)
        pages += [page for page in found if page[0] not in {p[0] for p in pages}]
        similar += offered
    titles = ", ".join(title for title, _ in pages) or "none"
    return ToolResult(f"Pages found: {titles}", data={"pages": pages, "similar": similar},
                      update={"pages": _found(ctx.vars, pages), "similar": (*ctx.vars.similar, *similar)})


def find_links(ctx: RunContext) -> ToolResult:
    """Search the names on the pages read (not the question's own): those found are links."""
    question = ctx.task.lower()
    links: list[str] = []
    for text in pages_read(ctx).values():
        names = [n for n in spans_of_kind(answer_spans(text), "name") if n.lower() not in question]
        for name in names[:MAX_LINKS]:
            found, _ = _search(ctx.deps, name)
            links += [title for title, _ in found]
    links = list(dict.fromkeys(links))
    return ToolResult(f"Links: {', '.join(links) or 'none'}", data={"links": links},
                      update={"links": (*ctx.vars.links, *links)})


def open_page(ctx: RunContext[Research]) -> ToolResult:
    title = ctx.vars.page or ""
    found, _ = _search(ctx.deps, title)
    opened = found[0][0] if found else ""
    return ToolResult(f"Page: {title}" if found else f"Could not open {title}", ok=bool(found),
                      data={"pages": found, "opened": opened},
                      update={"pages": _found(ctx.vars, found), "opened": opened})


def finish(ctx: RunContext[Research]) -> ToolResult:
    answer = ctx.vars.answer or ""
    step = ctx.deps.call(FINISH, answer)
    return ToolResult(step.observation, data={"answer": answer})


# -- candidates and the route ------------------------------------------------------------------
def page_candidates(ctx: RunContext) -> list[str]:
    read = pages_read(ctx)
    return [title for title in next_titles(ctx) if title not in read][:MAX_NEXT_PAGES]


def _candidate_spans(ctx: RunContext, text: str) -> list[str]:
    """The spans of ``text`` of the kind the question asks for, not already in the question."""
    question = ctx.task.lower()
    return [span for span in spans_of_kind(answer_spans(text), answer_kind(ctx.task)) if span.lower() not in question]


def opened_page(ctx: RunContext[Research]) -> str:
    """The text of the page ``Open`` found ("" when none was opened or found)."""
    title = ctx.vars.opened
    return pages_read(ctx).get(title, "") if title else ""


def answer_candidates(ctx: RunContext) -> list[str]:
    """The candidate spans of the page opened (a bridge's answer is on the page it leads to), or,
    when none was, of the pages read, latest first."""
    opened = opened_page(ctx)
    texts = [opened] if opened else list(reversed(pages_read(ctx).values()))
    spans = [span for text in texts for span in _candidate_spans(ctx, text)]
    return list(dict.fromkeys(spans))[:MAX_SPANS]


# Where Read goes, by the kind of question: yes/no, one of two named things, or a bridge.
YES_NO_QUESTION = Rule(lambda ctx: answer_kind(ctx.task) == "yesno", "a yes/no question")
EITHER_QUESTION = Rule(lambda ctx: alternatives(ctx.task) is not None, "one of two named things")
PAGES_TO_READ = Rule(lambda ctx: bool(page_candidates(ctx)), "pages to read", reads=("pages", "links", "similar"))


# -- prompts -----------------------------------------------------------------------------------
def _evidence(ctx: RunContext) -> str:
    """What a pick is made after: the pages read."""
    pages = "\n".join(f"{title}: {text[:PAGE_CHARS]}" for title, text in pages_read(ctx).items())
    return f"Pages:\n{pages or '(none)'}"


def _prompt(ask: str) -> tuple[Callable[[RunContext], list[Message]], Callable[[RunContext], list[Message]]]:
    """A pick's prompt (the pages read, the question, ``ask``) and its baseline (the question
    left out)."""

    def build(ctx: RunContext, *, blind: bool) -> list[Message]:
        lines = [_evidence(ctx), f"Question: {'N/A' if blind else ctx.task}", ask]
        return [Message("system", SYSTEM), Message("user", "\n".join(lines))]

    return (lambda ctx: build(ctx, blind=False)), (lambda ctx: build(ctx, blind=True))


def _pick(name: str, candidates: Callable[[RunContext], list[str]], ask: str, chooser: ChoiceMethod,
          *, into: str = "answer", reads: tuple[str, ...] = ()) -> Pick:
    prompt, baseline = _prompt(ask)
    return Pick(candidates, prompt=prompt, baseline=baseline, method=chooser, name=name, when_empty="", into=into,
                reads=("pages", *reads))


def build_scoped(*, chooser: ChoiceMethod = "auto") -> Flow:
    """The machine (module docstring); ``chooser``: a :class:`~statebound.flow.Pick` method
    (``"auto"``, the best the model can run; ``"score"``, the model's calibrated scores;
    ``"label"``, ``"grammar"``; ``"random"``, the control)."""
    to_finish = [(always(), "Finish")]
    states = [
        State("Read", outputs=[CallTool(read_question, name="search", reads=["pages", "similar"],
                                        writes=["pages", "similar"])],
              transitions=[(YES_NO_QUESTION, "YesNo"), (EITHER_QUESTION, "Either"), (always(), "Links")]),
        State("YesNo", outputs=[_pick("yesno", lambda ctx: ["yes", "no"], "Answer (yes or no):", chooser)],
              transitions=to_finish),
        State("Either", outputs=[_pick("either", lambda ctx: list(alternatives(ctx.task) or ()), "Answer:", chooser)],
              transitions=to_finish),
        State("Links", outputs=[CallTool(find_links, name="search", reads=["pages", "links"], writes=["links"])],
              transitions=[(PAGES_TO_READ, "Page"), (always(), "Answer")]),
        State("Page", outputs=[_pick("page", page_candidates, "The page to read next:", chooser, into="page",
                                             reads=("links", "similar"))],
              transitions=[(always(), "Open")]),
        State("Open", outputs=[CallTool(open_page, name="search", reads=["page", "pages"], writes=["pages", "opened"])],
              transitions=[(always(), "Answer")]),
        State("Answer", outputs=[_pick("answer", answer_candidates, "Answer:", chooser, reads=("opened",))], transitions=to_finish),
        State("Finish", outputs=[CallTool(finish, name="finish", reads=["answer"])], transitions=[(always(), "End")]),
        State("End", final=True),
    ]
    name = "stateflow-scoped" + ("" if chooser in ("auto", "score") else f"-{chooser}")
    return Flow(name=name, initial="Read", states=states, vars=Research, deps=QAEnvironment, max_turns=len(states) + 2)


@dataclass(frozen=True, slots=True)
class ScopedQAAgent:
    """The machine as a HotpotQA agent: its answer is what ``Finish`` gave the environment."""

    flow: Flow

    async def __call__(self, task: str, *, llm: LLM, env: QAEnvironment) -> Trace:
        run = await self.flow.run(task, llm=llm, deps=env)
        return dataclasses.replace(trace_of_flow(run, data_keys=("answer",)), answer=env.answer)
