"""How the StateFlow authors' ALFWorld runner turns a reply into a game command
(``process_action`` in ``ALFWorld/src/completion_utils.py`` of the StateFlow repository): the text
after the last ``Action:``, up to its first ``.``, lower-cased, then the admissible command with the
highest sentence BLEU against it (NLTK's ``sentence_bleu`` with smoothing method 4), if that score
is above 0.01; otherwise the text itself.

:func:`sentence_bleu` is NLTK's arithmetic (uniform weights over 1- to 4-grams, clipped n-gram
precision, brevity penalty against the reference, Chen and Cherry's method 4 for orders without a
match, orders that stay at zero left out), written here so the runner needs no NLTK.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

__all__ = ["MATCH_FLOOR", "closest_command", "read_command", "sentence_bleu"]

MATCH_FLOOR = 0.01  # a best score at or below this keeps the model's own text
_ORDERS = 4
_K = 5  # method 4's constant


def _ngrams(tokens: Sequence[str], n: int) -> Counter[tuple[str, ...]]:
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def sentence_bleu(reference: Sequence[str], hypothesis: Sequence[str]) -> float:
    """BLEU of ``hypothesis`` against one ``reference`` (token lists), smoothed as NLTK's method 4."""
    matches, totals = [], []
    for n in range(1, _ORDERS + 1):
        hyp, ref = _ngrams(hypothesis, n), _ngrams(reference, n)
        matches.append(sum(min(count, ref[gram]) for gram, count in hyp.items()))
        totals.append(max(1, sum(hyp.values())))
    if matches[0] == 0:
        return 0.0
    hyp_len, ref_len = len(hypothesis), len(reference)
    penalty = 1.0 if hyp_len > ref_len else math.exp(1 - ref_len / hyp_len)
    precisions = [m / t for m, t in zip(matches, totals)]
    missing = 1
    for i, matched in enumerate(matches):
        if matched == 0 and hyp_len > 1:
            precisions[i] = 1 / (2**missing * _K / math.log(hyp_len)) / totals[i]
            missing += 1
    return penalty * math.exp(math.fsum(p_log for p_log in (math.log(p) / _ORDERS for p in precisions if p > 0)))


def read_command(reply: str, *, marker: str = "Action:", trigger: str | None = None) -> str:
    """The command text of a reply: after the last ``marker`` (when ``trigger``, by default the
    marker, is in the reply), up to the first ``.``. ALFChat's runner looks for ``ACTION: `` and
    splits at ``ACTION:``."""
    if (trigger or marker) in reply:
        reply = reply.split(marker)[-1].strip()
    return reply.split(".")[0].strip()


def closest_command(reply: str, admissible: Sequence[str], *, marker: str = "Action:", trigger: str | None = None) -> str:
    """The admissible command the authors' runner sends for ``reply`` (module docstring)."""
    action = read_command(reply, marker=marker, trigger=trigger)
    if not admissible:
        return action
    action = action.lower()
    scores = [sentence_bleu(choice.split(), action.split()) for choice in admissible]
    best = max(range(len(scores)), key=lambda i: (scores[i], -i))  # the first of the best, as numpy's argmax
    return admissible[best] if scores[best] > MATCH_FLOOR else action
