"""How much of a result set an episode keeps: rows are fetched one at a time until a budget is spent.

A query may produce far more than anyone should hold (a recursive CTE of ~1 MB rows, a 9-way
cartesian join). Backends hand their cursor to :func:`fetch_within`, which keeps rows while the
rendered result (what ``str(rows)`` shows the agent) stays within ``max_bytes`` and the row count
within ``max_rows``, then stops reading; the rest is never fetched. The defaults keep every gold
result of the 1034 tasks whole (the largest renders to 28,696 bytes in 1,860 rows), so scoring is
unchanged for any query that could match one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["DEFAULT_BUDGET", "Fetched", "ResultBudget", "fetch_within"]


@dataclass(frozen=True, slots=True)
class ResultBudget:
    """The most of one result an episode keeps: rows, and bytes of its rendered text."""

    max_rows: int = 10_000
    max_bytes: int = 64 << 10

    def __post_init__(self) -> None:
        if self.max_rows < 1 or self.max_bytes < 1:
            raise ValueError(f"a result budget needs at least one row and one byte, not {self}")


DEFAULT_BUDGET = ResultBudget()


class Fetched(list[tuple[Any, ...]]):
    """The rows kept; ``cut`` says why fetching stopped early, or is None when the result is whole."""

    cut: str | None = None


def _rendered_bytes(row: tuple[Any, ...]) -> int:
    """Bytes ``row`` adds to ``str(rows)``: its repr and the ", " that separates it."""
    return len(repr(row).encode("utf-8", "replace")) + 2


def fetch_within(rows: Iterable[tuple[Any, ...]], budget: ResultBudget = DEFAULT_BUDGET) -> Fetched:
    """Pull rows from ``rows`` (a cursor) until ``budget`` would be exceeded, then stop pulling."""
    kept = Fetched()
    spent = 2  # the surrounding brackets
    for row in rows:
        if len(kept) >= budget.max_rows:
            kept.cut = (f"result cut at {budget.max_rows} rows (the row limit): "
                        "further rows were not fetched")
            break
        size = _rendered_bytes(tuple(row))
        if spent + size > budget.max_bytes:
            kept.cut = (f"result cut at {spent} bytes after {len(kept)} rows (the limit is "
                        f"{budget.max_bytes} bytes; the next row alone has {size}): "
                        "further rows were not fetched")
            break
        kept.append(tuple(row))
        spent += size
    return kept
