"""Statistics for comparing agents: Wilson intervals, exact McNemar, paired bootstrap.

McNemar's exact test is a two-sided binomial test (p = 1/2) on the discordant pairs, computed with
``scipy.stats.binomtest``; the bootstrap resamples tasks (pairs) with replacement.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

from statebound.errors import DefinitionError

__all__ = ["Bootstrap", "McNemar", "mcnemar_exact", "paired_bootstrap", "wilson_interval"]


def wilson_interval(successes: int, n: int, *, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a success rate, as fractions in [0, 1]; (0, 1) when ``n == 0``."""
    if not 0 <= successes <= n:
        raise DefinitionError(f"need 0 <= successes <= n, got {successes} of {n}")
    if n == 0:
        return 0.0, 1.0
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True, slots=True)
class McNemar:
    """Discordant pairs (``only_a``: A succeeded where B failed) and the exact two-sided p-value."""

    only_a: int
    only_b: int
    p_value: float


def mcnemar_exact(a: Sequence[bool], b: Sequence[bool]) -> McNemar:
    """Exact McNemar test on paired outcomes of two agents over the same tasks."""
    if len(a) != len(b):
        raise DefinitionError(f"paired outcomes differ in length: {len(a)} vs {len(b)}")
    only_a = sum(1 for x, y in zip(a, b) if x and not y)
    only_b = sum(1 for x, y in zip(a, b) if y and not x)
    if only_a + only_b == 0:
        return McNemar(0, 0, 1.0)
    from scipy.stats import binomtest

    p_value = binomtest(only_a, only_a + only_b, 0.5, alternative="two-sided").pvalue
    return McNemar(only_a, only_b, float(p_value))


@dataclass(frozen=True, slots=True)
class Bootstrap:
    """Mean of ``a - b`` with a percentile confidence interval and a two-sided bootstrap p-value."""

    mean_difference: float
    low: float
    high: float
    p_value: float


def paired_bootstrap(
    a: Sequence[float],
    b: Sequence[float],
    *,
    resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
) -> Bootstrap:
    """Paired bootstrap of the mean reward difference ``a - b`` (tasks resampled together)."""
    if len(a) != len(b) or not a:
        raise DefinitionError(f"need two equally long, non-empty reward lists, got {len(a)} and {len(b)}")
    import numpy as np

    differences = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(differences), size=(resamples, len(differences)))
    means = differences[picks].mean(axis=1)
    tail = (1 - confidence) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    p_value = min(1.0, 2 * min(float((means <= 0).mean()), float((means >= 0).mean())))
    return Bootstrap(float(differences.mean()), float(low), float(high), p_value)
