"""Choice states: the model picks one of the candidates the run supplies, by its own scores.

A small model asked to write a whole SQL query or command rarely writes a valid one, yet it
often ranks a handful of given options well. :class:`Pick` is an output function that asks it
that smaller question: ``candidates(ctx)`` lists the options (tables from ``SHOW TABLES``, the
admissible game commands...), and the model picks one by ``method``:

- ``"auto"`` (the default): the best chooser the backend has, in the order score, label,
  grammar (:mod:`statebound.flow.choosers`; never ``random`` on its own);
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
- ``"label"``: the candidates listed as lettered options after the prompt, one token generated,
  each option scored by its letter's log-probability among the token's most likely alternatives
  (backends with ``capabilities.top_logprobs``: any OpenAI-compatible server that returns
  ``top_logprobs``, and the embedded model). A ``baseline`` calibrates it the same way (it
  removes the model's preference for some letters). More candidates than the backend reports
  alternatives for are chosen in rounds (group winners meet again); ``scores`` are then each
  candidate's score in its first round;
- ``"grammar"``: greedy generation held to the candidates by a choice grammar (backends with
  ``capabilities.grammar``), or by a JSON-schema enum where the backend takes ``response_format``
  (``capabilities.schema``);
- ``"random"``: a seeded uniform draw, no model: the control that shows what the model adds.

The chosen candidate is appended as the state's reply (an ``assistant`` entry, ``source="llm"``),
and ``entry.data["choice"]`` records the choice as plain JSON (:meth:`Picked.to_data`)::

    {"name": "table", "method": "score", "asked": "auto", "candidates": ["singer", "concert"],
     "scores": [-0.41, -2.3], "picked": 0}

``method`` is the chooser that ran, ``asked`` the method the Pick was given. ``scores`` is None
for ``grammar`` and ``random`` choices and when there was nothing to choose between. A Pick given
its own ``prompt`` also records the text the model read (``"prompt"``) and, when it calibrated,
the baseline's (``"baseline"``): ``statebound view`` shows them beside the scores. Candidates are deduplicated (first occurrence kept) and empty ones dropped; with one
candidate left it is taken without a model call; with none, the run stops with a
:class:`~statebound.errors.DefinitionError` unless ``when_empty`` gives the text to append instead
(``picked`` is then None: :func:`last_pick` tells a transition). A candidate that does not fit the
model's context after the prompt ends the run with ``ExitReason.CONTEXT``, like any prompt that no
longer fits.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from statebound.errors import DefinitionError, UnsupportedFeature
from statebound.flow.choosers import ChoiceMethod, check_method, resolve
from statebound.flow.choosing import Chooser, Picked, Prompt, PromptFn, prompt_text
from statebound.flow.context import RunContext
from statebound.flow.outputs.base import Output
from statebound.llm.base import LLM, Completion
from statebound.llm.scoring import Normalization

__all__ = ["Pick"]


@dataclass(frozen=True, slots=True)
class Pick(Output):
    """Let the model pick one of ``candidates`` (a list, or ``candidates(ctx)`` returning one) and
    append it as the state's reply.

    ``prompt`` is what the candidates continue: None for the history as chat messages (the choice
    is the assistant's reply; add an ``Instruction`` before the ``Pick`` to ask the question), a
    string, or ``prompt(ctx)`` returning a string (continued verbatim) or chat messages.
    ``baseline`` (same forms) calibrates the ``score`` and ``label`` methods. ``method``,
    ``baseline``, the record and the edge cases: see the module docstring. ``normalization`` turns
    a candidate's token log-probabilities into its score (``"mean"`` per token, ``"gnmt"``,
    ``"sum"``; :mod:`statebound.llm.scoring`). ``seed`` fixes the ``random`` draws (each draw also
    depends on the task, the state, its visit, the history's length and the candidates, so runs
    repeat exactly). ``into`` names a flow variable the chosen candidate is written to (None
    when nothing was picked; :mod:`statebound.flow.variables`); or ``update(ctx, text)`` returns
    the flow variables the choice changes (``text``: the candidate chosen, None when there was
    none; ``ctx.vars`` as they were before), each declared in ``writes``. ``reads`` names the
    variables its candidates and prompts read (diagrams show them).
    """

    candidates: Callable[[RunContext[Any, Any]], Sequence[str]] | Sequence[str]
    prompt: str | PromptFn | None = field(default=None, kw_only=True)
    baseline: str | PromptFn | None = field(default=None, kw_only=True)
    baseline_weight: float = field(default=1.0, kw_only=True)
    method: ChoiceMethod = field(default="auto", kw_only=True)
    name: str = field(default="choice", kw_only=True)
    llm: LLM | None = field(default=None, kw_only=True)
    normalization: Normalization = field(default="mean", kw_only=True)
    seed: int = field(default=0, kw_only=True)
    when_empty: str | None = field(default=None, kw_only=True)
    into: str | None = field(default=None, kw_only=True)
    update: Callable[[RunContext[Any, Any], str | None], Mapping[str, Any]] | None = field(default=None, kw_only=True)
    writes: Sequence[str] = field(default=(), kw_only=True)
    reads: Sequence[str] = field(default=(), kw_only=True)
    _offer: Callable[[RunContext[Any, Any]], Sequence[str]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        candidates = self.candidates
        if isinstance(candidates, list | tuple) and all(isinstance(c, str) for c in candidates):
            fixed = tuple(candidates)  # the same options at every visit
            object.__setattr__(self, "candidates", fixed)
            object.__setattr__(self, "_offer", lambda ctx: fixed)
        elif callable(candidates):
            object.__setattr__(self, "_offer", candidates)
        else:
            raise DefinitionError(f"Pick needs a list of str or a function candidates(ctx) -> list of str, "
                                  f"got {candidates!r}")
        check_method(self.method)
        if self.into is not None and self.update is not None:
            raise DefinitionError(f"Pick({self.name}) takes into= (the field the choice is written to) or update= "
                                  "(a function of it), not both")
        written = (self.into,) if self.into is not None else ()
        object.__setattr__(self, "writes", tuple(dict.fromkeys((*written, *self.writes))))
        object.__setattr__(self, "reads", tuple(self.reads))

    def offered(self, ctx: RunContext[Any, Any]) -> Sequence[str]:
        """The candidates at this point of the run: the fixed list, or what ``candidates(ctx)`` gives."""
        return self._offer(ctx)

    @property
    def label(self) -> str:
        return f"Pick({self.name}, {self.method})"

    def check_model(self, llm: LLM | None, *, where: str) -> None:
        """Refuse, before a run starts, a method the model (the Pick's own, else ``llm``) cannot
        run: on chat messages for the history, on text for a string prompt; a prompt function's
        shape shows only when it runs, so it is refused only where neither shape can be chosen."""
        model = self.llm or llm
        if model is None or self.method in ("random", "auto"):  # auto: any chooser, refused when it runs
            return
        shapes = [False] if isinstance(self.prompt, str) else [True] if self.prompt is None else [False, True]
        errors = []
        for chat in shapes:
            try:
                resolve(self.method, model.capabilities, chat=chat, model=model.model)
                return
            except UnsupportedFeature as error:
                errors.append(error)
        raise UnsupportedFeature(f"{where}: Pick {self.name!r}: {errors[-1]}")

    @property
    def chooser(self) -> Chooser:
        return Chooser(self.method, self.name, self.llm, self.normalization, self.baseline_weight, self.seed)

    async def run(self, ctx: RunContext[Any, Any]) -> None:
        candidates = tuple(dict.fromkeys(c for c in self.offered(ctx) if c))
        chooser = self.chooser
        if len(candidates) < 2:  # no model needed: the prompt is not even built
            shape: Prompt = self.prompt if isinstance(self.prompt, str) else ()
            kind = chooser.recorded_kind(ctx, shape)
            if candidates:
                self._append(ctx, candidates[0], chooser.picked(kind, candidates, None, 0), None)
                return
            if self.when_empty is None:
                raise DefinitionError(
                    f"state {ctx.state!r}: Pick {self.name!r} found no candidates; give it "
                    "when_empty='...' (the reply to append instead) or make sure candidates(ctx) returns some")
            self._append(ctx, self.when_empty, chooser.picked(kind, (), None, None), None)
            return
        asked: list[Prompt] = []  # the baseline, once the chooser asks for it

        def baseline() -> Prompt:
            asked.append(self._prompt(ctx, baseline=True))
            return asked[-1]

        prompt = self._prompt(ctx)
        picked, completion = await chooser.choose(ctx, candidates, prompt, None if self.baseline is None else baseline)
        if self.prompt is not None and picked.method != "random":  # what the model read (the history is shown apart)
            picked = dataclasses.replace(picked, prompt=prompt_text(prompt),
                                         baseline=prompt_text(asked[0]) if asked else None)
        self._append(ctx, candidates[picked.index or 0], picked, completion)

    def _prompt(self, ctx: RunContext[Any, Any], *, baseline: bool = False) -> Prompt:
        source = self.baseline if baseline else self.prompt
        prompt = source(ctx) if callable(source) else source
        if prompt is None:
            return ctx.messages()
        return prompt if isinstance(prompt, str) else tuple(prompt)

    def _append(self, ctx: RunContext[Any, Any], text: str, picked: Picked, completion: Completion | None) -> None:
        name = ctx.speaker or (ctx.agent.name if ctx.agent is not None else None)
        usage = None if completion is None else completion.usage
        ctx.add("assistant", text, "llm", name=name, usage=usage, data=picked.to_data())
        if self.into is not None:
            ctx.update({self.into: picked.text}, by=f"Pick({self.name})")
        elif self.update is not None:
            ctx.update(self.update(ctx, picked.text), by=f"Pick({self.name})")
