"""How one choice among given texts is made and recorded: the :class:`Chooser` that a
:class:`~statebound.flow.outputs.pick.Pick`, an LLM-decided transition and a group chat's speaker
selection share (which kind runs on which backend: :mod:`statebound.flow.choosers`), and the
record of a choice, :class:`Picked` (``entry.data["choice"]``), with the functions that read
choices back from a history.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from statebound.errors import DefinitionError, ModelOutputError, UnsupportedFeature
from statebound.flow.choosers import (
    ChoiceMethod,
    ChooserKind,
    check_method,
    label_group_size,
    label_messages,
    label_prompt,
    label_scores,
    resolve,
)
from statebound.flow.context import RunContext
from statebound.flow.history import Entry
from statebound.flow.result import CallKind
from statebound.llm.base import LLM, Completion, Message, Request, Usage
from statebound.llm.choice_grammar import choice_grammar, is_choice_grammar, offered
from statebound.llm.scoring import Normalization, text_score

__all__ = [
    "ChoiceMethod",
    "ChooserKind",
    "Chooser",
    "Picked",
    "PromptFn",
    "choice_grammar",
    "choice_schema",
    "grammar_choice",
    "is_choice_grammar",
    "last_pick",
    "offered",
    "picks",
    "prompt_text",
]

PromptFn = Callable[[RunContext], str | Sequence[Message]]
Prompt = str | tuple[Message, ...]  # a text continued verbatim, or chat messages


def grammar_choice(name: str, grammar: str | None, reply: str) -> Picked | None:
    """The choice a reply held to ``grammar`` made, when ``grammar`` is a choice grammar (the
    reply, stripped, among its candidates; ``index`` None if the backend ignored the grammar)."""
    if grammar is None or not is_choice_grammar(grammar):
        return None
    candidates = tuple(offered(grammar))
    return Picked(name, "grammar", candidates, None, _reply_index(reply, candidates), asked="grammar")


def _reply_index(reply: str, candidates: Sequence[str]) -> int | None:
    """The candidate a reply held to their choice grammar names (as is, or stripped), or None."""
    for text in (reply, reply.strip()):
        if text in candidates:
            return candidates.index(text)
    return None


@dataclass(frozen=True, slots=True)
class Picked:
    """One choice as recorded: what was chosen (``name``), by which chooser (``method``; the
    method asked for in ``asked``), among what, the candidates' scores (``score`` and ``label``)
    and the index picked (None: there was nothing to pick); for a :class:`Pick` given its own
    ``prompt``, the text the model read (``prompt``) and the calibration prompt (``baseline``)
    when one was scored."""

    name: str
    method: ChoiceMethod
    candidates: tuple[str, ...]
    scores: tuple[float, ...] | None
    index: int | None
    asked: ChoiceMethod | None = None
    prompt: str | None = None
    baseline: str | None = None

    @property
    def text(self) -> str | None:
        """The chosen candidate (None when there was none)."""
        return None if self.index is None else self.candidates[self.index]

    def to_data(self) -> dict[str, Any]:
        """The ``Entry.data`` of the choice's history entry (plain JSON)."""
        scores = None if self.scores is None else [s if math.isfinite(s) else None for s in self.scores]
        shown = {key: text for key, text in (("prompt", self.prompt), ("baseline", self.baseline)) if text is not None}
        return {"choice": {"name": self.name, "method": self.method, "asked": self.asked or self.method,
                           "candidates": list(self.candidates), "scores": scores, "picked": self.index, **shown}}

    @classmethod
    def from_entry(cls, entry: Entry) -> Picked | None:
        """The choice an entry records, or None for entries that are not choices."""
        data = entry.data.get("choice") if isinstance(entry.data, dict) else None
        if not isinstance(data, dict):
            return None
        scores = data.get("scores")
        return cls(str(data["name"]), data["method"], tuple(data["candidates"]),
                   None if scores is None else tuple(-math.inf if s is None else s for s in scores),
                   data.get("picked"), data.get("asked"), data.get("prompt"), data.get("baseline"))


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


BaselineFn = Callable[[], Prompt]


@dataclass(frozen=True, slots=True)
class Chooser:
    """How one choice among named options is made: what :class:`Pick`, LLM-decided transitions
    and group-chat speaker selection share. ``method`` is resolved against the model per choice
    (:func:`~statebound.flow.choosers.resolve`); ``name`` labels the record; ``call`` is the kind
    the model calls count as. The other fields: see :class:`Pick`."""

    method: ChoiceMethod = "auto"
    name: str = "choice"
    llm: LLM | None = None
    normalization: Normalization = "mean"
    baseline_weight: float = 1.0
    seed: int = 0
    call: CallKind = "llm"

    def __post_init__(self) -> None:
        check_method(self.method)

    def kind(self, ctx: RunContext, prompt: Prompt) -> ChooserKind:
        """The chooser that runs: ``method`` as the model can run it (``prompt`` as given)."""
        if self.method == "random":
            return "random"
        llm = ctx.llm_for(self.llm)
        return resolve(self.method, llm.capabilities, chat=not isinstance(prompt, str), model=llm.model)

    def recorded_kind(self, ctx: RunContext, prompt: Prompt) -> ChoiceMethod:
        """The chooser a choice that needs no model is recorded under: the one that would have
        run, or the method asked for where none can (no model, or one that cannot choose)."""
        try:
            return self.kind(ctx, prompt)
        except (DefinitionError, UnsupportedFeature):
            return self.method

    def picked(self, kind: ChoiceMethod, candidates: tuple[str, ...], scores: tuple[float, ...] | None,
               index: int | None) -> Picked:
        return Picked(self.name, kind, candidates, scores, index, asked=self.method)

    async def choose(self, ctx: RunContext, candidates: tuple[str, ...], prompt: Prompt,
                     baseline: BaselineFn | None = None) -> tuple[Picked, Completion | None]:
        """Pick one of ``candidates`` (at least one) after ``prompt``; ``baseline()`` gives the
        calibration prompt when the chooser uses one. The model is called only for two or more."""
        if len(candidates) == 1:
            return self.picked(self.recorded_kind(ctx, prompt), candidates, None, 0), None
        kind = self.kind(ctx, prompt)
        scores: tuple[float, ...] | None = None
        completion: Completion | None = None
        if kind == "random":
            index = self._draw(ctx, candidates)
        elif kind == "grammar":
            index, completion = await self._generate(ctx, candidates, prompt)
        else:
            choose = self._score if kind == "score" else self._label
            scores, index, completion = await choose(ctx, candidates, prompt, baseline)
        return self.picked(kind, candidates, scores, index), completion

    async def _complete(self, ctx: RunContext, prompt: Prompt, **options: Any) -> Completion:
        request = Request(prompt=prompt, **options) if isinstance(prompt, str) else Request(messages=prompt, **options)
        return await ctx.complete(request, llm=self.llm, kind=self.call)

    async def _score(self, ctx: RunContext, candidates: tuple[str, ...], prompt: Prompt,
                     baseline: BaselineFn | None) -> tuple[tuple[float, ...], int, Completion]:
        llm = ctx.llm_for(self.llm)
        completion = await self._complete(ctx, prompt, score=candidates, logprobs=True)
        scores = self._scores(llm, completion, candidates)
        if baseline is not None:
            prior = await self._complete(ctx, baseline(), score=candidates, logprobs=True)
            weight = self.baseline_weight
            scores = tuple(s - weight * p for s, p in zip(scores, self._scores(llm, prior, candidates)))
            completion = Completion(completion.choices, completion.usage + prior.usage, completion.model)
        return scores, _best(scores, range(len(candidates))), completion

    def _scores(self, llm: LLM, completion: Completion, candidates: tuple[str, ...]) -> tuple[float, ...]:
        if len(completion.choices) != len(candidates) or any(c.logprobs is None for c in completion.choices):
            raise UnsupportedFeature(f"{llm.model} did not return log-probabilities for every candidate")
        return tuple(text_score([t.logprob for t in c.logprobs or ()], normalization=self.normalization)
                     for c in completion.choices)

    async def _label(self, ctx: RunContext, candidates: tuple[str, ...], prompt: Prompt,
                     baseline: BaselineFn | None) -> tuple[tuple[float, ...], int, Completion]:
        """Lettered options in rounds of at most the backend's group size; each candidate's score
        is its calibrated letter log-probability in its first round."""
        llm = ctx.llm_for(self.llm)
        size = label_group_size(llm.capabilities)
        scores: list[float] = [-math.inf] * len(candidates)
        usage, model = Usage(), llm.model
        pool = list(range(len(candidates)))
        first_round = True
        while len(pool) > 1:
            winners = []
            for group in _groups(pool, size):
                if len(group) == 1:
                    winners.append(group[0])
                    continue
                options = [candidates[i] for i in group]
                group_scores, completion = await self._label_round(ctx, options, size, prompt, baseline)
                usage, model = usage + completion.usage, completion.model
                if first_round:
                    for i, score in zip(group, group_scores):
                        scores[i] = score
                winners.append(_best(group_scores, group))
            pool, first_round = winners, False
        return tuple(scores), pool[0], Completion((), usage, model)

    async def _label_round(self, ctx: RunContext, options: list[str], size: int, prompt: Prompt,
                           baseline: BaselineFn | None) -> tuple[tuple[float, ...], Completion]:
        async def letters(asked: Prompt, *, floor: bool) -> tuple[tuple[float, ...], Completion]:
            lettered = label_prompt(asked, options) if isinstance(asked, str) else label_messages(asked, options)
            completion = await self._complete(ctx, lettered, max_tokens=1, temperature=0.0, logprobs=True,
                                              top_logprobs=size)
            logprobs = completion.choices[0].logprobs if completion.choices else None
            return label_scores(logprobs[0] if logprobs else None, len(options), floor=floor), completion

        scores, completion = await letters(prompt, floor=False)
        if baseline is not None:
            prior, prior_completion = await letters(baseline(), floor=True)
            scores = tuple(s - self.baseline_weight * p for s, p in zip(scores, prior))
            completion = Completion(completion.choices, completion.usage + prior_completion.usage, completion.model)
        return scores, completion

    async def _generate(self, ctx: RunContext, candidates: tuple[str, ...], prompt: Prompt) -> tuple[int, Completion]:
        """Greedy generation held to the candidates: a GBNF choice grammar, else a JSON-schema
        enum (``{"choice": ...}``)."""
        llm = ctx.llm_for(self.llm)
        longest = max(len(c.encode("utf-8")) for c in candidates) + 2  # a token covers at least one byte
        if llm.capabilities.grammar:
            completion = await self._complete(ctx, prompt, grammar=choice_grammar(candidates), max_tokens=longest,
                                              temperature=0.0)
            reply = completion.text
        else:
            completion = await self._complete(ctx, prompt, schema=choice_schema(candidates), max_tokens=longest + 24,
                                              temperature=0.0)
            reply = _schema_reply(completion.text)
        if (index := _reply_index(reply, candidates)) is not None:
            return index, completion
        raise ModelOutputError(
            f"state {ctx.state!r}: the reply {completion.text[:80]!r} to the choice {self.name!r} is none of its "
            f"{len(candidates)} candidates; the backend may have ignored the grammar or schema")

    def _draw(self, ctx: RunContext, candidates: tuple[str, ...]) -> int:
        seen = json.dumps([self.seed, ctx.task, ctx.state, ctx.visits.get(ctx.state, 1), len(ctx.history),
                           self.name, list(candidates)])
        draw = random.Random(int.from_bytes(hashlib.sha256(seen.encode("utf-8")).digest()[:8], "big"))
        return draw.randrange(len(candidates))


def prompt_text(prompt: Prompt) -> str:
    """A prompt as text: a string as it is, chat messages one ``role: content`` paragraph each."""
    return prompt if isinstance(prompt, str) else "\n\n".join(f"{m.role}: {m.content}" for m in prompt)


def choice_schema(candidates: Sequence[str]) -> dict[str, Any]:
    """A JSON schema whose only instances are ``{"choice": <one of candidates>}`` (an object at the
    top, which every server that takes ``response_format`` accepts)."""
    return {"type": "object", "properties": {"choice": {"type": "string", "enum": list(candidates)}},
            "required": ["choice"], "additionalProperties": False}


def _schema_reply(text: str) -> str:
    """The ``choice`` of a reply held to :func:`choice_schema` ("" when it is not such JSON)."""
    try:
        value = json.loads(text)
    except ValueError:
        return ""
    choice = value.get("choice") if isinstance(value, dict) else None
    return choice if isinstance(choice, str) else ""


def _groups(pool: list[int], size: int) -> list[list[int]]:
    """``pool`` cut, in order, into as few runs of at most ``size`` as possible, of near-equal sizes."""
    count = -(-len(pool) // size)
    base, extra = divmod(len(pool), count)
    bounds = [0]
    for i in range(count):
        bounds.append(bounds[-1] + base + (i < extra))
    return [pool[start:end] for start, end in zip(bounds, bounds[1:])]


def _best(scores: Sequence[float], indices: Sequence[int]) -> int:
    """The index (from ``indices``) of the highest score, the first on ties."""
    position = max(range(len(scores)), key=lambda i: (scores[i], -i))
    return indices[position]
