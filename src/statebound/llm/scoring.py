"""Length-normalised log-probability: how a text's per-token log-probabilities become one score.

Summed log-probabilities favour short texts (every token costs), so texts of different lengths are
compared per token (``"mean"``), or with the GNMT length penalty ``lp(n) = (5 + n)^alpha / 6^alpha``
(Wu et al. 2016; ``"gnmt"``, what PASS uses), or summed as they are (``"sum"``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Literal

__all__ = ["DEFAULT_ALPHA", "Normalization", "length_penalty", "most_likely", "normalized_score", "text_score"]

# PASS names alpha without giving its value; 0.6 is the usual GNMT/Tensor2Tensor setting.
DEFAULT_ALPHA = 0.6
Normalization = Literal["mean", "gnmt", "sum"]


def length_penalty(length: int, *, alpha: float = DEFAULT_ALPHA) -> float:
    """``(5 + length)^alpha / (5 + 1)^alpha``."""
    return ((5 + length) ** alpha) / (6**alpha)


def normalized_score(logprobs: Sequence[float], *, alpha: float = DEFAULT_ALPHA) -> float:
    """Sum of token log-probs divided by the GNMT length penalty; ``-inf`` for an empty text."""
    if not logprobs:
        return -math.inf
    return math.fsum(logprobs) / length_penalty(len(logprobs), alpha=alpha)


def text_score(logprobs: Sequence[float], *, normalization: Normalization = "mean") -> float:
    """One score for a text from its tokens' log-probabilities; ``-inf`` for an empty text."""
    if not logprobs:
        return -math.inf
    if normalization == "mean":
        return math.fsum(logprobs) / len(logprobs)
    if normalization == "gnmt":
        return normalized_score(logprobs)
    if normalization == "sum":
        return math.fsum(logprobs)
    raise ValueError(f"unknown normalization {normalization!r}: use 'mean', 'gnmt' or 'sum'")


def most_likely(alternatives: Iterable[tuple[object, object]], top: int | None = None) -> tuple[tuple[str, float], ...]:
    """A token's reported alternatives as (token, log-probability) pairs, most likely first; the
    ``top`` most likely only, when given."""
    ranked = sorted(((str(t), float(lp)) for t, lp in alternatives), key=lambda pair: -pair[1])  # type: ignore[arg-type]
    return tuple(ranked if top is None else ranked[:max(top, 0)])
