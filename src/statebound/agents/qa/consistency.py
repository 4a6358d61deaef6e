"""Self-consistency (k samples, majority answer) and non-agent -> agent hybrids.

Both are generic over what produces an answer: a *sampler* is ``async (index) -> Attempt`` (one
sample of a method at the sampling temperature) and a *fallback* is ``async () -> Attempt``
(one run of an agent). A hybrid calls the fallback only when no answer repeats among the k
samples, as in the paper (``CoT -> PASS`` with k = 5).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable, Callable, Hashable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from statebound.contract.trace import TraceEntry
from statebound.errors import DefinitionError
from statebound.exits import ExitReason
from statebound.llm.base import Usage

__all__ = [
    "SC_SAMPLES",
    "SC_TEMPERATURE",
    "Attempt",
    "Vote",
    "hybrid",
    "majority_vote",
    "self_consistency",
]

SC_SAMPLES = 5  # k in the paper (appendix A.2)
SC_TEMPERATURE = 0.7


@dataclass(slots=True, kw_only=True)
class Attempt:
    """One run of a method on one question: its final answer (None when it gave none), costs, how it
    ended and what happened (trace entries in order)."""

    answer: str | None
    usage: Usage = field(default_factory=Usage)
    text: str = ""  # the full generated trajectory
    meta: dict[str, Any] = field(default_factory=dict)  # e.g. {"violations": 1, "corrections": 1}
    trace: tuple[TraceEntry, ...] = ()
    exit: ExitReason = ExitReason.FINAL


def _tagged(entries: Sequence[TraceEntry], sample: int | str) -> tuple[TraceEntry, ...]:
    return tuple(replace(entry, data={**entry.data, "sample": sample}) for entry in entries)


@dataclass(frozen=True, slots=True)
class Vote:
    """The outcome of a majority vote over k answers."""

    answer: str | None  # the first-written answer of the winning group (None when nobody answered)
    count: int  # how many samples gave it
    k: int

    @property
    def repeated(self) -> bool:
        """Some answer came up at least twice (otherwise a hybrid falls back to its agent)."""
        return self.count >= 2


def majority_vote(answers: Sequence[str | None], *, key: Callable[[str], Hashable]) -> Vote:
    """The most frequent answer by ``key`` (ties go to the group answered first); None is no vote."""
    given = [(key(a), a) for a in answers if a is not None]
    if not given:
        return Vote(answer=None, count=0, k=len(answers))
    counts = Counter(k for k, _ in given)
    winner, count = counts.most_common(1)[0]  # Counter keeps first-seen order among ties
    first = next(a for k, a in given if k == winner)
    return Vote(answer=first, count=count, k=len(answers))


def _merge(attempts: Sequence[Attempt], answer: str | None, **meta: Any) -> Attempt:
    usage = sum((a.usage for a in attempts), Usage())
    totals: Counter[str] = Counter()
    for attempt in attempts:
        totals.update({k: v for k, v in attempt.meta.items() if isinstance(v, int) and not isinstance(v, bool)})
    text = "\n\n".join(f"--- sample {i + 1} ---\n{a.text}" for i, a in enumerate(attempts))
    trace = tuple(entry for i, a in enumerate(attempts) for entry in _tagged(a.trace, i))
    ended = attempts[-1].exit if answer is None else ExitReason.FINAL
    return Attempt(answer=answer, usage=usage, text=text, meta={**totals, **meta}, trace=trace, exit=ended)


async def self_consistency(
    sample: Callable[[int], Awaitable[Attempt]],
    *,
    k: int = SC_SAMPLES,
    key: Callable[[str], Hashable],
    concurrent: bool = True,
) -> tuple[Attempt, Vote]:
    """Draw ``k`` samples and return the majority answer (with summed usage) and the vote."""
    if k < 1:
        raise DefinitionError(f"self-consistency needs k >= 1 samples, got {k}")
    if concurrent:
        attempts = list(await asyncio.gather(*(sample(i) for i in range(k))))
    else:
        attempts = [await sample(i) for i in range(k)]
    vote = majority_vote([a.answer for a in attempts], key=key)
    return _merge(attempts, vote.answer, votes=vote.count, samples=k), vote


async def hybrid(
    sample: Callable[[int], Awaitable[Attempt]],
    fallback: Callable[[], Awaitable[Attempt]],
    *,
    k: int = SC_SAMPLES,
    key: Callable[[str], Hashable],
    concurrent: bool = True,
) -> Attempt:
    """Self-consistency first; when no answer repeats among the ``k`` samples, run ``fallback``.

    ``meta["fell_back"]`` says which happened; usage covers every call made.
    """
    first, vote = await self_consistency(sample, k=k, key=key, concurrent=concurrent)
    if vote.repeated:
        first.meta["fell_back"] = False
        return first
    second = await fallback()
    merged = _merge([first, second], second.answer, votes=vote.count, samples=k, fell_back=True)
    merged.text = f"{first.text}\n\n--- fallback agent ---\n{second.text}"
    merged.trace = first.trace + _tagged(second.trace, "fallback")
    return merged
