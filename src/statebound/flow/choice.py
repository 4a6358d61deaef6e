"""Choice states: the model picks one of the candidates the run supplies, by its own scores.

A small model asked to write a whole SQL query or command rarely writes a valid one, yet it
often ranks a handful of given options well. :class:`Pick` is an output function that asks it
that smaller question: ``candidates(ctx)`` lists the options (tables from ``SHOW TABLES``, the
admissible game commands...), and the model picks one by ``method``:

- ``"score"``: the length-normalised log-probability of each candidate as the continuation of the
  prompt; the highest wins (first on ties). One scoring request evaluates the prompt once and then
  each candidate's tokens (backends with ``capabilities.scoring``: the embedded llama.cpp model; an
  OpenAI-compatible server opened with ``scoring=True``). With a ``baseline`` prompt (the same
  prompt without the evidence, say the question replaced by ``N/A``), a candidate's score is how
  much the evidence raises it: its score after the prompt minus its score after the baseline
  (domain-conditional PMI, Holtzman et al. 2021). That removes the model's preference for some
  candidates whatever the question (a small model's mean per-token score favours long names whose
  later tokens are easy); it costs a second scoring request. ``baseline_weight`` (default 1)
  scales what is subtracted: between 0 (no calibration) and 1 (the full difference);
- ``"grammar"``: greedy generation held to the candidates by a choice grammar (backends with
  ``capabilities.grammar``);
- ``"random"``: a seeded uniform draw, no model: the control that shows what the model adds.

The chosen candidate is appended as the state's reply (an ``assistant`` entry, ``source="llm"``),
and ``entry.data["choice"]`` records the choice as plain JSON (:meth:`Picked.to_data`)::

    {"name": "table", "method": "score", "candidates": ["singer", "concert"],
     "scores": [-0.41, -2.3], "picked": 0}

``scores`` is None for ``grammar`` and ``random`` choices and when there was nothing to choose
between. Candidates are deduplicated (first occurrence kept) and empty ones dropped; with one
candidate left it is taken without a model call; with none, the run stops with a
:class:`~statebound.errors.DefinitionError` unless ``when_empty`` gives the text to append instead
(``picked`` is then None: :func:`last_pick` tells a transition). A candidate that does not fit the
model's context after the prompt ends the run with ``ExitReason.CONTEXT``, like any prompt that no
longer fits.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from statebound.errors import DefinitionError, ModelOutputError, UnsupportedFeature
from statebound.flow.context import RunContext
from statebound.flow.history import Entry
from statebound.llm.base import LLM, Completion, Message, Request
from statebound.llm.scoring import Normalization, text_score

__all__ = [
    "ChoiceMethod",
    "Pick",
    "Picked",
    "PromptFn",
    "choice_grammar",
    "grammar_choice",
    "is_choice_grammar",
    "last_pick",
    "offered",
    "picks",
]

ChoiceMethod = Literal["score", "grammar", "random"]
PromptFn = Callable[[RunContext], str | Sequence[Message]]
_METHODS = ("score", "grammar", "random")
_GRAMMAR_HEAD = "root ::= "
_LITERAL = r'"(?:[^"\\]|\\.)*"'
_CHOICE_GRAMMAR = re.compile(re.escape(_GRAMMAR_HEAD) + f"{_LITERAL}(?: \\| {_LITERAL})*")


def choice_grammar(candidates: Sequence[str]) -> str:
    """A GBNF grammar whose only sentences are ``candidates``."""
    if not candidates:
        raise ValueError("a choice grammar needs at least one candidate")
    return _GRAMMAR_HEAD + " | ".join(json.dumps(candidate) for candidate in candidates)


def offered(grammar: str) -> list[str]:
    """The candidates of a :func:`choice_grammar`, read back from its GBNF."""
    if not grammar.startswith(_GRAMMAR_HEAD):
        raise ValueError(f"not a choice grammar: {grammar[:60]!r}")
    return [json.loads(literal) for literal in re.findall(_LITERAL, grammar)]


def is_choice_grammar(grammar: str) -> bool:
    """``grammar`` is exactly a :func:`choice_grammar` (one rule, an alternation of literals)."""
    return _CHOICE_GRAMMAR.fullmatch(grammar) is not None


def grammar_choice(name: str, grammar: str | None, reply: str) -> Picked | None:
    """The choice a reply held to ``grammar`` made, when ``grammar`` is a choice grammar (the
    reply, stripped, among its candidates; ``index`` None if the backend ignored the grammar)."""
    if grammar is None or not is_choice_grammar(grammar):
        return None
    candidates = tuple(offered(grammar))
    return Picked(name, "grammar", candidates, None, _reply_index(reply, candidates))


def _reply_index(reply: str, candidates: Sequence[str]) -> int | None:
    """The candidate a reply held to their choice grammar names (as is, or stripped), or None."""
    for text in (reply, reply.strip()):
        if text in candidates:
            return candidates.index(text)
    return None


@dataclass(frozen=True, slots=True)
class Picked:
    """One choice as recorded: what was chosen (``name``), how, among what, the candidates'
    scores (``score`` method) and the index picked (None: there was nothing to pick)."""

    name: str
    method: ChoiceMethod
    candidates: tuple[str, ...]
    scores: tuple[float, ...] | None
    index: int | None

    @property
    def text(self) -> str | None:
        """The chosen candidate (None when there was none)."""
        return None if self.index is None else self.candidates[self.index]

    def to_data(self) -> dict[str, Any]:
        """The ``Entry.data`` of the choice's history entry (plain JSON)."""
        scores = None if self.scores is None else [s if math.isfinite(s) else None for s in self.scores]
        return {"choice": {"name": self.name, "method": self.method, "candidates": list(self.candidates),
                           "scores": scores, "picked": self.index}}

    @classmethod
    def from_entry(cls, entry: Entry) -> Picked | None:
        """The choice an entry records, or None for entries that are not choices."""
        data = entry.data.get("choice") if isinstance(entry.data, dict) else None
        if not isinstance(data, dict):
            return None
        scores = data.get("scores")
        return cls(str(data["name"]), data["method"], tuple(data["candidates"]),
                   None if scores is None else tuple(-math.inf if s is None else s for s in scores),
                   data.get("picked"))


def picks(history: Sequence[Entry], name: str | None = None) -> list[Picked]:
    """Every choice in ``history`` (of ``name`` if given), in order."""
    found = (Picked.from_entry(entry) for entry in history if entry.source == "llm")
    return [p for p in found if p is not None and (name is None or p.name == name)]


def last_pick(ctx: RunContext, name: str | None = None) -> Picked | None:
    """The latest choice of the run (of ``name`` if given), or None."""
    for entry in reversed(ctx.history):
        if entry.source == "llm" and (picked := Picked.from_entry(entry)) is not None:
            if name is None or picked.name == name:
                return picked
    return None


@dataclass(frozen=True, slots=True)
class Pick:
    """Let the model pick one of ``candidates(ctx)`` and append it as the state's reply.

    ``prompt`` is what the candidates continue: None for the history as chat messages (the choice
    is the assistant's reply; add an ``Instruction`` before the ``Pick`` to ask the question), a
    string, or ``prompt(ctx)`` returning a string (continued verbatim) or chat messages.
    ``baseline`` (same forms) calibrates the ``score`` method. ``method``, ``baseline``, the record
    and the edge cases: see the module docstring. ``normalization`` turns
    a candidate's token log-probabilities into its score (``"mean"`` per token, ``"gnmt"``,
    ``"sum"``; :mod:`statebound.llm.scoring`). ``seed`` fixes the ``random`` draws (each draw also
    depends on the task, the state, its visit, the history's length and the candidates, so runs
    repeat exactly).
    """

    candidates: Callable[[RunContext], Sequence[str]]
    prompt: str | PromptFn | None = field(default=None, kw_only=True)
    baseline: str | PromptFn | None = field(default=None, kw_only=True)
    baseline_weight: float = field(default=1.0, kw_only=True)
    method: ChoiceMethod = field(default="score", kw_only=True)
    name: str = field(default="choice", kw_only=True)
    llm: LLM | None = field(default=None, kw_only=True)
    normalization: Normalization = field(default="mean", kw_only=True)
    seed: int = field(default=0, kw_only=True)
    when_empty: str | None = field(default=None, kw_only=True)

    def __post_init__(self) -> None:
        if not callable(self.candidates):
            raise DefinitionError(f"Pick needs a function candidates(ctx) -> list of str, got {self.candidates!r}")
        if self.method not in _METHODS:
            raise DefinitionError(f"Pick method {self.method!r} is unknown: use 'score', 'grammar' or 'random'")

    @property
    def label(self) -> str:
        return f"Pick({self.name}, {self.method})"

    async def run(self, ctx: RunContext) -> None:
        candidates = tuple(dict.fromkeys(c for c in self.candidates(ctx) if c))
        if not candidates:
            if self.when_empty is None:
                raise DefinitionError(
                    f"state {ctx.state!r}: Pick {self.name!r} found no candidates; give it "
                    "when_empty='...' (the reply to append instead) or make sure candidates(ctx) returns some")
            self._append(ctx, self.when_empty, Picked(self.name, self.method, (), None, None), None)
            return
        if len(candidates) == 1:
            self._append(ctx, candidates[0], Picked(self.name, self.method, candidates, None, 0), None)
            return
        if self.method == "random":
            index = self._draw(ctx, candidates)
            self._append(ctx, candidates[index], Picked(self.name, "random", candidates, None, index), None)
            return
        if self.method == "score":
            scores, completion = await self._score(ctx, candidates)
            index = max(range(len(candidates)), key=lambda i: (scores[i], -i))
        else:
            index, completion = await self._generate(ctx, candidates)
            scores = None
        picked = Picked(self.name, self.method, candidates, scores, index)
        self._append(ctx, candidates[index], picked, completion)

    # -- the three methods -------------------------------------------------------------------
    def _request(self, ctx: RunContext, *, baseline: bool = False, **options: Any) -> Request:
        source = self.baseline if baseline else self.prompt
        prompt = source(ctx) if callable(source) else source
        if prompt is None:
            return Request(messages=ctx.messages(), **options)
        if isinstance(prompt, str):
            return Request(prompt=prompt, **options)
        return Request(messages=tuple(prompt), **options)

    async def _score(self, ctx: RunContext, candidates: tuple[str, ...]) -> tuple[tuple[float, ...], Completion]:
        llm = ctx.llm_for(self.llm)
        if not llm.capabilities.scoring:
            raise UnsupportedFeature(
                f"{llm.model} cannot score candidates (it returns no log-probabilities of given text); "
                "use Pick(method='grammar') with a model that takes grammars, or method='random'")
        completion = await ctx.complete(self._request(ctx, score=candidates, logprobs=True), llm=self.llm)
        scores = self._scores(llm, completion, candidates)
        if self.baseline is None:
            return scores, completion
        request = self._request(ctx, baseline=True, score=candidates, logprobs=True)
        prior = await ctx.complete(request, llm=self.llm)
        weight = self.baseline_weight
        calibrated = tuple(s - weight * p for s, p in zip(scores, self._scores(llm, prior, candidates)))
        both = Completion(completion.choices, completion.usage + prior.usage, completion.model)
        return calibrated, both

    def _scores(self, llm: LLM, completion: Completion, candidates: tuple[str, ...]) -> tuple[float, ...]:
        if len(completion.choices) != len(candidates) or any(c.logprobs is None for c in completion.choices):
            raise UnsupportedFeature(f"{llm.model} did not return log-probabilities for every candidate")
        return tuple(text_score([t.logprob for t in c.logprobs or ()], normalization=self.normalization)
                     for c in completion.choices)

    async def _generate(self, ctx: RunContext, candidates: tuple[str, ...]) -> tuple[int, Completion]:
        llm = ctx.llm_for(self.llm)
        if not llm.capabilities.grammar:
            raise UnsupportedFeature(
                f"{llm.model} takes no grammar; use Pick(method='score') with a model that scores "
                "text, or method='random'")
        longest = max(len(c.encode("utf-8")) for c in candidates) + 2  # a token covers at least one byte
        request = self._request(ctx, grammar=choice_grammar(candidates), max_tokens=longest, temperature=0.0)
        completion = await ctx.complete(request, llm=self.llm)
        reply = completion.text
        if (index := _reply_index(reply, candidates)) is not None:
            return index, completion
        raise ModelOutputError(
            f"state {ctx.state!r}: the reply {reply[:80]!r} to Pick {self.name!r} is none of its "
            f"{len(candidates)} candidates; the backend may have ignored the grammar")

    def _draw(self, ctx: RunContext, candidates: tuple[str, ...]) -> int:
        seen = json.dumps([self.seed, ctx.task, ctx.state, ctx.visits.get(ctx.state, 1), len(ctx.history),
                           self.name, list(candidates)])
        draw = random.Random(int.from_bytes(hashlib.sha256(seen.encode("utf-8")).digest()[:8], "big"))
        return draw.randrange(len(candidates))

    def _append(self, ctx: RunContext, text: str, picked: Picked, completion: Completion | None) -> None:
        name = ctx.speaker or (ctx.agent.name if ctx.agent is not None else None)
        usage = None if completion is None else completion.usage
        ctx.add("assistant", text, "llm", name=name, usage=usage, data=picked.to_data())
