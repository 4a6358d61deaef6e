"""InterCode-SQL's reward, with upstream's exact arithmetic.

Rows become ``str(tuple)``; the reward is the multiset intersection over union of the two lists,
scaled (when they share rows) by Kendall's tau between the shared rows in each list's own order,
then rounded to 2 decimals. Success is a reward of exactly 1.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from collections.abc import Sequence
from typing import Any

__all__ = ["informative", "shared_in_order", "sql_reward"]


def sql_reward(agent_rows: Sequence[Any] | None, gold_rows: Sequence[Any] | None) -> float:
    """Reward of the agent's last result against the gold result; 0 when either is not rows.

    ``agent_rows`` is None (or any non-list) when the last action failed, returned no result set,
    or nothing was executed: upstream scores those 0.
    """
    if not isinstance(agent_rows, list) or not isinstance(gold_rows, list):
        return 0.0
    agent = [str(row) for row in agent_rows]
    gold = [str(row) for row in gold_rows]
    agent_counts, gold_counts = Counter(agent), Counter(gold)
    union = agent_counts | gold_counts
    if not union:
        return 1.0
    intersection = agent_counts & gold_counts
    reward = sum(intersection.values()) / sum(union.values())
    if intersection:
        tau = _kendall_tau(shared_in_order(agent, intersection), shared_in_order(gold, intersection))
        if not math.isnan(tau):
            reward = round(tau * reward, 2)
    return float(reward)


def _kendall_tau(left: list[str], right: list[str]) -> float:
    """``scipy.stats.kendalltau`` as upstream calls it; NaN when undefined (one row, all ties)."""
    from scipy.stats import kendalltau  # heavy import, only when scoring

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns on samples too small for a statistic
        statistic = kendalltau(left, right, nan_policy="omit").statistic
    return float(statistic)


def shared_in_order(items: Sequence[str], shared: Counter[str]) -> list[str]:
    """The items that are in ``shared``, in their own order, as many copies as ``shared`` holds."""
    remaining = Counter(shared)
    kept = []
    for item in items:
        if remaining[item] > 0:
            remaining[item] -= 1
            kept.append(item)
    return kept


def informative(gold_rows: Sequence[Any] | None) -> bool:
    """Whether a gold result tells queries apart from one that finds nothing. Such a query returns
    no rows, or one row of aggregates over nothing (a count of 0, NULL for the others), and
    matches a gold result of that kind exactly (an empty table's, a condition no row meets)."""
    rows = list(gold_rows or ())
    if not rows:
        return False
    if len(rows) > 1:
        return True
    row = rows[0] if isinstance(rows[0], tuple | list) else (rows[0],)
    return any(value not in (0, None) for value in row)
