"""Transitions: rules over the current state and history, or an LLM asked to choose.

A state's ``transitions`` is an ordered list; the first that fires wins. Every transition is a
:class:`Decider`, which names the next state (or None: the next transition is tried). An item is

* ``(rule, "Target")`` -- ``rule(ctx) -> bool``: a :class:`Rule` from the helpers below
  (:func:`always`, :func:`contains`, :func:`matches`, :func:`repeated`, :func:`tool_ok`,
  :func:`tool_failed`, :func:`called`, combinable with ``&``, ``|``, ``~``) or any plain function
  of the :class:`RunContext`; it compiles to a :class:`RuleEdge`, the decider that names
  ``Target`` when the rule holds; or
* a :class:`Decider` itself: :func:`llm_choice` (ask an LLM: it chooses among the allowed states
  with a chooser, :mod:`statebound.flow.choosers`, or writes a free answer parsed strictly,
  falling back when it names no allowed state), :func:`choose` (your function) or
  :func:`first_due` (the first of an ordered list of optional parts that is due, a pipeline
  drawn as one group).

A rule reads the flow variables it names in ``reads=``; without it they are found in its code
(``ctx.vars.<field>``, in the functions it calls that it closes over), which ``flow check`` and
the diagrams use.
"""

from __future__ import annotations

import inspect
import math
import re
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from statebound.errors import DefinitionError
from statebound.flow.choosers import ChoiceMethod, check_method, resolve, usable
from statebound.flow.choosing import Chooser
from statebound.flow.context import RunContext
from statebound.flow.history import Entry, Source
from statebound.flow.variables import fields_read
from statebound.llm.base import LLM, Message, Request

__all__ = [
    "Decider",
    "Decision",
    "FirstDue",
    "Rule",
    "RuleEdge",
    "always",
    "called",
    "choose",
    "contains",
    "first_due",
    "llm_choice",
    "matches",
    "parse_choice",
    "repeated",
    "tool_failed",
    "tool_ok",
]

Test = Callable[[RunContext[Any, Any]], bool]


class Rule:
    """A named test of the run context; ``label`` shows on diagrams and in transition events;
    ``reads`` names the flow variables it reads (None: found in its code when asked).

    What static checks (:mod:`statebound.flow.checks`) may rely on: ``catch_all`` -- it always
    fires (:func:`always`, or ``|`` with such a rule); ``history_only`` -- built by the helpers
    here from the history alone (no plain functions), so the same history gives the same answer;
    ``tool_status`` -- ``(name, ok)`` of :func:`tool_ok` / :func:`tool_failed`.
    """

    __slots__ = ("_reads", "catch_all", "history_only", "label", "test", "tool_status")

    def __init__(self, test: Test, label: str, *, catch_all: bool = False, history_only: bool = False,
                 tool_status: tuple[str | None, bool] | None = None, reads: Sequence[str] | None = None) -> None:
        self.test = test
        self.label = label
        self.catch_all = catch_all
        self.history_only = history_only
        self.tool_status = tool_status
        self._reads = () if history_only and reads is None else None if reads is None else tuple(reads)

    @property
    def reads(self) -> tuple[str, ...]:
        """The flow variables the rule reads: as declared, else as found in its code."""
        if self._reads is None:
            self._reads = tuple(sorted(fields_read(self.test)))
        return self._reads

    def __call__(self, ctx: RunContext[Any, Any]) -> bool:
        return self.test(ctx)

    def __and__(self, other: Rule | Test) -> Rule:
        a, b = self.test, as_rule(other)
        return Rule(lambda ctx: a(ctx) and b.test(ctx), f"{self.label} and {b.label}",
                    catch_all=self.catch_all and b.catch_all,
                    history_only=self.history_only and b.history_only, reads=_union(self.reads, b.reads))

    def __or__(self, other: Rule | Test) -> Rule:
        a, b = self.test, as_rule(other)
        return Rule(lambda ctx: a(ctx) or b.test(ctx), f"{self.label} or {b.label}",
                    catch_all=self.catch_all or b.catch_all,
                    history_only=self.history_only and b.history_only, reads=_union(self.reads, b.reads))

    def __invert__(self) -> Rule:
        a = self.test
        return Rule(lambda ctx: not a(ctx), f"not {self.label}", history_only=self.history_only, reads=self.reads)

    def __repr__(self) -> str:
        return f"Rule({self.label})"


def _union(*reads: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(name for names in reads for name in names))


def as_rule(value: Rule | Test) -> Rule:
    """Wrap a plain ``fn(ctx) -> bool`` as a :class:`Rule` (labelled with its name)."""
    if isinstance(value, Rule):
        return value
    if callable(value):
        return Rule(value, getattr(value, "__name__", "rule"))
    raise DefinitionError(f"a transition rule must be a Rule or a function fn(ctx) -> bool, got {value!r}")


def _latest(ctx: RunContext, source: Source | None) -> str | None:
    if source is None:
        history = ctx.history
        return history[-1].content if history else None
    last = ctx.last_of(source)
    return None if last is None else last.content


def always() -> Rule:
    """Always fires (use it last, as the default transition)."""
    return Rule(lambda ctx: True, "always", catch_all=True, history_only=True)


def contains(*texts: str, source: Source | None = None, ignore_case: bool = False) -> Rule:
    """Fires when the latest entry (the latest from ``source``, if given) contains any of ``texts``."""
    if not texts:
        raise DefinitionError("contains() needs at least one text, e.g. contains('Error')")
    needles = tuple(t.lower() for t in texts) if ignore_case else texts

    def test(ctx: RunContext) -> bool:
        content = _latest(ctx, source)
        if content is None:
            return False
        if ignore_case:
            content = content.lower()
        for needle in needles:  # a loop, not any(): a rule runs on every transition
            if needle in content:
                return True
        return False

    where = f" in {source}" if source else ""
    return Rule(test, "contains " + " or ".join(repr(t) for t in texts) + where, history_only=True)


def matches(pattern: str | re.Pattern[str], *, source: Source | None = None, flags: int = 0) -> Rule:
    """Fires when ``pattern`` (a regex, searched anywhere) matches the latest entry (from ``source``)."""
    try:
        compiled = re.compile(pattern, flags) if isinstance(pattern, str) else pattern
    except re.error as exc:
        raise DefinitionError(f"matches({pattern!r}): not a valid regular expression ({exc})") from None

    def test(ctx: RunContext) -> bool:
        content = _latest(ctx, source)
        return content is not None and compiled.search(content) is not None

    where = f" in {source}" if source else ""
    return Rule(test, f"matches /{compiled.pattern}/{where}", history_only=True)


def repeated(
    times: int = 2, *, source: Source = "llm", key: Callable[[Entry], object] | None = None
) -> Rule:
    """Fires when the latest ``times`` entries from ``source`` are the same: the model is going
    round in circles, as greedy decoding of a small model often does after a failure.

    Entries compare by their text without surrounding whitespace, or by ``key(entry)`` (say, the
    command a tool entry's ``data`` says it ran, whatever thought came with it).
    """
    if times < 2:
        raise DefinitionError(f"repeated(times={times}): a repetition needs times >= 2")
    identity = key or (lambda entry: entry.content.strip())

    def test(ctx: RunContext) -> bool:
        latest = []
        for entry in reversed(ctx.history):
            if entry.source == source:
                latest.append(identity(entry))
                if len(latest) == times:
                    return all(item == latest[0] for item in latest)
        return False

    return Rule(test, f"{source} repeated {times}x", history_only=True)


def _tool_status(ok: bool, name: str | None) -> Rule:
    def test(ctx: RunContext) -> bool:
        history = ctx.history
        for i in range(len(history) - 1, ctx.entered_at - 1, -1):
            entry = history[i]
            if entry.source == "tool" and (name is None or entry.name == name):
                return entry.ok is ok
        return False

    what = "tool ok" if ok else "tool failed"
    return Rule(test, f"{what}({name})" if name else what, history_only=True, tool_status=(name, ok))


def tool_ok(name: str | None = None) -> Rule:
    """Fires when the latest tool result of this state visit (of tool ``name``) succeeded."""
    return _tool_status(True, name)


def tool_failed(name: str | None = None) -> Rule:
    """Fires when the latest tool result of this state visit (of tool ``name``) failed."""
    return _tool_status(False, name)


def called(name: str | None = None) -> Rule:
    """Fires when the model's latest reply in this state visit called function ``name`` (any
    function, if None) through ``CallLLM(tools=...)``."""
    def test(ctx: RunContext) -> bool:
        reply = ctx.last_of("llm", since_entered=True)
        calls = reply.data.get("tool_calls", ()) if reply is not None and isinstance(reply.data, dict) else ()
        return any(name is None or call["name"] == name for call in calls)

    return Rule(test, f"called {name}" if name else "called a tool", history_only=True)


@dataclass(frozen=True, slots=True)
class Decision:
    """A decider's answer: the ``target`` state (None: no decision, try the next transition);
    ``choice`` is the record of a choice among the targets (:meth:`Picked.to_data`'s), if one was
    made."""

    target: str | None
    reason: str
    choice: Mapping[str, Any] | None = None


NO_DECISION = Decision(None, "")  # what a decider answers that does not decide


class Decider(ABC):
    """A transition: it names the next state among ``targets``, or None (the next transition is
    then tried). ``label`` shows on diagrams; what it declares, with its default: ``catch_all``
    (False; True: it always names a state, so static checks want no transition after it),
    ``reads`` (none: the flow variables it reads) and ``check_model(llm)`` (any model: refuse,
    before the run, one it cannot use)."""

    __slots__ = ()

    @property
    def catch_all(self) -> bool:
        """Whether it always names a state (False, unless it says)."""
        return False

    @property
    @abstractmethod
    def targets(self) -> tuple[str, ...]:
        """Every state it may name."""

    @property
    @abstractmethod
    def label(self) -> str:
        """Its name on diagrams."""

    @property
    def reads(self) -> tuple[str, ...]:
        """The flow variables it reads (none, unless it says)."""
        return ()

    def check_model(self, llm: LLM | None) -> None:
        """Refuse, before the run, a model it cannot use (any model, unless it says)."""
        return None

    @abstractmethod
    async def decide(self, ctx: RunContext[Any, Any]) -> Decision:
        """The next state (``Decision.target``), or no decision (None)."""

    def decide_now(self, ctx: RunContext[Any, Any]) -> Decision | None:
        """:meth:`decide` without awaiting, for a decider that never waits (a rule); None: it must
        be awaited (a model's choice). The engine tries this first: a rule costs no coroutine."""
        return None


class RuleEdge(Decider):
    """``(rule, "Target")`` as a decider: it names ``target`` when ``rule`` holds."""

    __slots__ = ("_fired", "rule", "target")

    def __init__(self, rule: Rule, target: str) -> None:
        self.rule = rule
        self.target = target
        self._fired = Decision(target, rule.label)

    @property
    def targets(self) -> tuple[str, ...]:
        return (self.target,)

    @property
    def label(self) -> str:
        return self.rule.label

    @property
    def catch_all(self) -> bool:
        return self.rule.catch_all

    @property
    def reads(self) -> tuple[str, ...]:
        return self.rule.reads

    async def decide(self, ctx: RunContext[Any, Any]) -> Decision:
        return self.decide_now(ctx)

    def decide_now(self, ctx: RunContext[Any, Any]) -> Decision:
        return self._fired if self.rule.test(ctx) else NO_DECISION

    def __repr__(self) -> str:
        return f"RuleEdge({self.rule.label!r} -> {self.target})"


class FirstDue(Decider):
    """The first part due of a pipeline of optional parts (see :func:`first_due`); a view that
    starts further on (:meth:`starting_at`) belongs to the same ``group``."""

    __slots__ = ("_due", "_none", "group", "name", "otherwise", "parts", "start")

    def __init__(self, parts: Sequence[tuple[str, Rule | Test]], *, otherwise: str | None = None,
                 name: str = "next part", start: int = 0, group: FirstDue | None = None) -> None:
        if not parts and otherwise is None:
            raise DefinitionError("first_due() needs at least one (target, condition) part or an otherwise=")
        self.parts = tuple((target, as_rule(condition)) for target, condition in parts)
        self.otherwise = otherwise
        self.name = name
        self.start = start
        self.group = group or self
        self._due = tuple((rule, Decision(target, rule.label)) for target, rule in self.parts[start:])
        self._none = NO_DECISION if otherwise is None else Decision(otherwise, "none due")

    @property
    def targets(self) -> tuple[str, ...]:
        found = [target for target, _ in self.parts[self.start:]]
        return tuple(dict.fromkeys([*found, *([self.otherwise] if self.otherwise is not None else [])]))

    @property
    def label(self) -> str:
        return self.name if self.start == 0 else f"{self.name} from {self.entry}"

    @property
    def entry(self) -> str:
        """The first part this view tries (``otherwise`` when it tries none)."""
        return self.parts[self.start][0] if self.start < len(self.parts) else str(self.otherwise)

    @property
    def catch_all(self) -> bool:
        return self.otherwise is not None or any(rule.catch_all for rule, _ in self._due)

    @property
    def reads(self) -> tuple[str, ...]:
        return _union(*(rule.reads for rule, _ in self._due))

    def starting_at(self, target: str) -> FirstDue:
        """The same pipeline entered at the part ``target`` (``otherwise``: none is tried)."""
        names = [name for name, _ in self.parts]
        if target not in names and target != self.otherwise:
            raise DefinitionError(f"first_due {self.name!r} has no part {target!r} (parts: {', '.join(names)})")
        start = names.index(target) if target in names else len(names)
        return FirstDue(self.parts, otherwise=self.otherwise, name=self.name, start=start, group=self.group)

    async def decide(self, ctx: RunContext[Any, Any]) -> Decision:
        return self.decide_now(ctx)

    def decide_now(self, ctx: RunContext[Any, Any]) -> Decision:
        for rule, decision in self._due:
            if rule.test(ctx):
                return decision
        return self._none

    def __repr__(self) -> str:
        return f"first_due({self.label!r})"


def first_due(parts: Sequence[tuple[str, Rule | Test]], *, otherwise: str | None = None,
              name: str = "next part") -> FirstDue:
    """The first of ``parts`` (``(target, condition)`` pairs, in order) whose condition holds:
    a pipeline of optional parts, each taken when it is due. When none is, the run goes to
    ``otherwise`` (None: the next transition is tried; ``flow check`` names where the run goes).
    ``name`` labels the group on diagrams, where the pipeline is drawn once, as one group, for
    every state that enters it (``pipeline.starting_at("Sort")``: a state that enters it further on)."""
    return FirstDue(parts, otherwise=otherwise, name=name)


_STRIP = " \t\r\n\"'`*._:;![]()<>"


def parse_choice(text: str, options: Sequence[str]) -> str | None:
    """Strictly parse an LLM's pick among ``options``.

    Accepted: the whole reply, or its first non-empty line, equal to one option name ignoring
    case, surrounding quotes/brackets/markdown and trailing punctuation, optionally after a
    ``Label:`` prefix (``"Next state: Verify"``). Anything else is None (no allowed option).
    """
    by_key = {o.lower(): o for o in options}
    stripped = text.strip()
    lines = [line for line in stripped.splitlines() if line.strip()]
    candidates = [stripped] + lines[:1]
    for candidate in candidates:
        for piece in (candidate, candidate.rsplit(":", 1)[-1]):
            key = piece.strip(_STRIP).lower()
            if key in by_key:
                return by_key[key]
    return None


DEFAULT_CHOICE_QUESTION = "Based on the conversation so far, which state should come next?"
TEXT = "text"  # a free answer parsed by parse_choice: the paper's LLM-decided transition
TransitionMethod = ChoiceMethod | Literal["text"]


class LLMChoice(Decider):
    """Ask an LLM to choose the next state among ``targets`` (see :func:`llm_choice`)."""

    __slots__ = ("_targets", "fallback", "llm", "max_tokens", "method", "question")

    def __init__(
        self,
        targets: Sequence[str],
        *,
        fallback: str,
        question: str = DEFAULT_CHOICE_QUESTION,
        llm: LLM | None = None,
        max_tokens: int = 16,
        method: TransitionMethod = "auto",
    ) -> None:
        if not targets:
            raise DefinitionError("llm_choice() needs at least one target state")
        if method != TEXT:
            check_method(method, where="llm_choice")
        self._targets = tuple(dict.fromkeys([*targets, fallback]))
        self.fallback = fallback
        self.question = question
        self.llm = llm
        self.max_tokens = max_tokens
        self.method = method

    @property
    def targets(self) -> tuple[str, ...]:
        return self._targets

    @property
    def label(self) -> str:
        return "LLM choice"

    @property
    def catch_all(self) -> bool:
        return True  # always names a state: the LLM's pick or the fallback

    def prompt(self, ctx: RunContext) -> str:
        states = ctx.flow.states_by_name
        lines = []
        for name in self.targets:
            description = states[name].description if name in states else ""
            lines.append(f"- {name}: {description}" if description else f"- {name}")
        options = "\n".join(lines)
        return f"{self.question}\nOptions:\n{options}\nAnswer with exactly one option name and nothing else."

    def chooser(self, ctx: RunContext) -> Chooser | None:
        """The chooser that decides (None: a free answer, for ``method="text"``, or for ``"auto"``
        with a model that can run no chooser)."""
        if self.method == TEXT:
            return None
        if self.method == "auto" and not usable(ctx.llm_for(self.llm).capabilities, chat=True):
            return None
        return Chooser(cast(ChoiceMethod, self.method), "next state", self.llm, call="choice")

    def check_model(self, llm: LLM | None) -> None:
        """Refuse, before a run starts, a chooser ``llm`` (the model the decision would call,
        unless it has its own) cannot run, naming the one that would work."""
        model = self.llm or llm
        if self.method in (TEXT, "auto", "random") or model is None:
            return
        resolve(cast(ChoiceMethod, self.method), model.capabilities, chat=True, model=model.model)

    def options(self, ctx: RunContext) -> tuple[str, ...]:
        """What a chooser picks among: the targets' descriptions when each has its own (what a
        state is for reads as a continuation of the conversation far better than its name does),
        else their names."""
        states = ctx.flow.states_by_name
        described = tuple(states[name].description if name in states else "" for name in self.targets)
        return described if all(described) and len(set(described)) == len(described) else self.targets

    async def decide(self, ctx: RunContext) -> Decision:
        if (chooser := self.chooser(ctx)) is not None:
            return await self._choose(ctx, chooser)
        messages = ctx.messages() + (Message("user", self.prompt(ctx)),)
        request = Request(messages=messages, max_tokens=self.max_tokens, temperature=0.0)
        completion = await ctx.complete(request, llm=self.llm, kind="choice")
        picked = parse_choice(completion.text, self.targets)
        if picked is None:
            return Decision(
                self.fallback,
                f"LLM answer {completion.text.strip()[:80]!r} names no allowed state "
                f"({', '.join(self.targets)}); fallback to {self.fallback}",
            )
        return Decision(picked, f"LLM chose {picked}")


    async def _choose(self, ctx: RunContext, chooser: Chooser) -> Decision:
        """The chooser picks among :meth:`options` after the conversation and the question,
        calibrated by the question alone (what the conversation adds to each option)."""
        question = Message("user", self.question)
        choice, _ = await chooser.choose(ctx, self.options(ctx), ctx.messages() + (question,), lambda: (question,))
        target = self.targets[choice.index] if choice.index is not None else self.fallback
        return Decision(target, f"LLM chose {target} by {choice.method}{_scores(choice.scores, self.targets)}",
                        choice={**choice.to_data()["choice"], "targets": list(self.targets)})


def llm_choice(
    targets: Sequence[str],
    *,
    fallback: str,
    question: str = DEFAULT_CHOICE_QUESTION,
    llm: LLM | None = None,
    max_tokens: int = 16,
    method: TransitionMethod = "auto",
) -> LLMChoice:
    """Ask an LLM which of ``targets`` comes next.

    The LLM sees the history (as the state's agent would) plus ``question`` and the allowed state
    names with their descriptions. ``method`` says how it answers: with a chooser (``"auto"``,
    the default: the best the model can run, and a free answer where it can run none;
    ``"score"``, ``"label"``, ``"grammar"``, or ``"random"``, the control;
    :mod:`statebound.flow.choosers`) it picks one of the names, and
    the transition event records the choice (method, candidates, scores); with ``"text"`` (the
    StateFlow paper's way) it writes an answer of at most ``max_tokens`` that
    :func:`parse_choice` reads, and when it names no allowed state the run goes to ``fallback``
    and the transition event says so. The calls' tokens count toward the state's usage and the
    token budget (call kind ``"choice"``).
    """
    return LLMChoice(targets, fallback=fallback, question=question, llm=llm, max_tokens=max_tokens,
                     method=method)


def _scores(scores: tuple[float, ...] | None, names: Sequence[str]) -> str:
    """`` (A -0.41, B -2.30)``: the options' scores as a transition's reason shows them."""
    if scores is None:
        return ""
    shown = ", ".join(f"{n} {s:.2f}" if math.isfinite(s) else f"{n} -" for n, s in zip(names, scores))
    return f" ({shown})"


class Choose(Decider):
    """A transition computed by your function (see :func:`choose`)."""

    __slots__ = ("_catch_all", "_label", "_reads", "_targets", "fn")

    def __init__(self, fn: Callable[[RunContext[Any, Any]], str | Awaitable[str | None] | None],
                 targets: Sequence[str], *, catch_all: bool = False, reads: Sequence[str] | None = None) -> None:
        self.fn = fn
        self._targets = tuple(targets)
        self._label = getattr(fn, "__name__", "choose")
        self._catch_all = catch_all  # False: fn may return None and fall through to the next transition
        self._reads = None if reads is None else tuple(reads)

    @property
    def targets(self) -> tuple[str, ...]:
        return self._targets

    @property
    def label(self) -> str:
        return self._label

    @property
    def catch_all(self) -> bool:
        return self._catch_all

    @property
    def reads(self) -> tuple[str, ...]:
        """As declared, else as found in ``fn``'s code."""
        if self._reads is None:
            self._reads = tuple(sorted(fields_read(self.fn)))
        return self._reads

    async def decide(self, ctx: RunContext) -> Decision:
        target = self.fn(ctx)
        if inspect.isawaitable(target):
            target = await target
        if target is not None and target not in self.targets:
            raise DefinitionError(
                f"choose({self.label}) returned {target!r}, which is not among its declared "
                f"targets {list(self.targets)}; add it to targets=[...]"
            )
        return Decision(target, f"{self.label} chose {target}")


def choose(fn: Callable[[RunContext[Any, Any]], str | Awaitable[str | None] | None], *, targets: Sequence[str],
           catch_all: bool = False, reads: Sequence[str] | None = None) -> Choose:
    """A transition whose target ``fn(ctx)`` names (None: fall through to the next transition).

    ``targets`` declares every state ``fn`` may return, for validation and diagrams;
    ``catch_all=True`` says ``fn`` always names one (static checks then need no default after it);
    ``reads`` the flow variables it reads (else found in its code).
    """
    return Choose(fn, targets, catch_all=catch_all, reads=reads)
