"""Accumulate token usage and cost per call, per label (e.g. a flow state) and per model."""

from __future__ import annotations

import warnings
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from statebound.llm.base import LLM, Completion, LLMWrapper, Request, Usage
from statebound.llm.pricing import cost, is_priced

__all__ = ["MAX_TOKEN_COUNT", "MeteredLLM", "UsageMeter", "UsageRecord", "checked_count"]

MAX_TOKEN_COUNT = 10**12
"""Above any count one request can have, below what a 64-bit store column holds."""

_named: set[tuple[str, str]] = set()  # (source, field) already named in a warning


def checked_count(value: object, *, field: str, source: str) -> int | None:
    """``value`` if it is a sane token count (an int from 0 to below 10**12), else None: unknown.

    A figure a server sends that is not one (10**30, -5, "12", 3.5) would end a run while it is
    saved, or skew every total; it is named in one warning per ``source`` and ``field``.
    """
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < MAX_TOKEN_COUNT:
        return value
    if (source, field) not in _named:
        _named.add((source, field))
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:40] + "..."
        warnings.warn(f"{source} reported usage {field}={shown}, which is not a token count "
                      f"(0 to {MAX_TOKEN_COUNT:.0e}): recorded as unknown, counted as 0 "
                      "(named once)", stacklevel=2)
    return None


@dataclass(frozen=True, slots=True)
class UsageRecord:
    """One call: which model, what it used, under which label (``None`` when unlabelled)."""

    model: str
    usage: Usage
    label: str | None = None

    @property
    def cost(self) -> float:
        return cost(self.model, self.usage)


@dataclass
class UsageMeter:
    """Collects :class:`UsageRecord` s; totals, cost and breakdowns are computed from them."""

    records: list[UsageRecord] = field(default_factory=list)

    def record(self, model: str, usage: Usage, *, label: str | None = None) -> UsageRecord:
        entry = UsageRecord(model, usage, label)
        self.records.append(entry)
        return entry

    def add(self, completion: Completion, *, label: str | None = None) -> UsageRecord:
        return self.record(completion.model, completion.usage, label=label)

    @property
    def total(self) -> Usage:
        return sum((r.usage for r in self.records), Usage())

    @property
    def cost(self) -> float:
        """USD over all records; models missing from the price table count 0 (see ``unpriced``)."""
        return sum(r.cost for r in self.records)

    @property
    def known_cost(self) -> float | None:
        """USD over all records, or ``None`` when a model's price is unknown (see ``unpriced``)."""
        return None if self.unpriced else self.cost

    @property
    def unpriced(self) -> frozenset[str]:
        """Models used whose price is unknown, so :attr:`cost` under-counts them."""
        return frozenset(r.model for r in self.records if not is_priced(r.model))

    def by_label(self) -> dict[str | None, Usage]:
        return self._group(lambda r: r.label)

    def by_model(self) -> dict[str, Usage]:
        return self._group(lambda r: r.model)  # type: ignore[return-value]

    def cost_by_label(self) -> dict[str | None, float]:
        totals: dict[str | None, float] = defaultdict(float)
        for r in self.records:
            totals[r.label] += r.cost
        return dict(totals)

    def _group(self, key: Callable[[UsageRecord], str | None]) -> dict[str | None, Usage]:
        totals: dict[str | None, Usage] = defaultdict(Usage)
        for r in self.records:
            totals[key(r)] += r.usage
        return dict(totals)


@dataclass
class MeteredLLM(LLMWrapper):
    """Wraps an LLM so every completion is recorded in ``meter`` under ``label``.

    ``meter.records`` then lists each call; ``MeteredLLM(llm, meter, label="Solve")`` is how a
    caller attributes usage to a state or a role without the backend knowing about either.
    """

    llm: LLM
    meter: UsageMeter
    label: str | None = None

    def wrapped(self) -> LLM:
        return self.llm

    def labelled(self, label: str | None) -> MeteredLLM:
        """The same model and meter under another label."""
        return MeteredLLM(self.llm, self.meter, label)

    async def complete(self, request: Request) -> Completion:
        completion = await self.llm.complete(request)
        self.meter.add(completion, label=self.label)
        return completion
