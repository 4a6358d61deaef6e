"""The quantities a maths word problem states, and the arithmetic steps that combine two of them:
the reading rules of the scoped GSM8K machine (:mod:`statebound.agents.qa.scoped_arithmetic`).

Quantities are exact fractions: written numbers (``1,200``, ``3.5``, ``$12``), percentages as
fractions (``20%`` is 1/5), and the number words a problem spells out (``three``, ``twice``,
``half``, ``a dozen``). A step combines two quantities of the pool with ``+ - * /`` into one; the
machine's picks of steps use every quantity exactly once, so a problem of n quantities is solved
in n - 1 steps. Steps whose result is negative or not a short decimal (1/3) are not offered: a
grade-school solution has none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from itertools import combinations

from statebound.agents.question_text import NUMBER_WORDS

__all__ = ["ArithmeticStep", "format_quantity", "parse_quantity", "quantities", "steps"]

_WORDS: dict[str, int | Fraction] = {
    **NUMBER_WORDS, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
    "hundred": 100, "twice": 2, "double": 2, "triple": 3, "thrice": 3, "dozen": 12,
    "half": Fraction(1, 2), "quarter": Fraction(1, 4),
}
_QUANTITY = re.compile(r"(?P<digits>\d[\d,]*(?:\.\d+)?)(?P<percent>\s*%|\s+percent\b)?"
                       r"|\b(?P<word>" + "|".join(_WORDS) + r")\b", re.IGNORECASE)
_MAX_DENOMINATOR = 100  # a step's result is a decimal of at most two places


@dataclass(frozen=True, slots=True)
class ArithmeticStep:
    """``left operator right = result``, and the pool it leaves (the two replaced by the result)."""

    left: Fraction
    operator: str
    right: Fraction
    result: Fraction
    pool: tuple[Fraction, ...]

    @property
    def expression(self) -> str:
        return f"{format_quantity(self.left)} {self.operator} {format_quantity(self.right)}"

    @property
    def text(self) -> str:
        return f"{self.expression} = {format_quantity(self.result)}"


def quantities(problem: str) -> list[Fraction]:
    """Every quantity ``problem`` states, in order of appearance."""
    found = []
    for match in _QUANTITY.finditer(problem):
        if match["digits"]:
            value = Fraction(match["digits"].replace(",", ""))
            found.append(value / 100 if match["percent"] else value)
        else:
            found.append(Fraction(_WORDS[match["word"].lower()]))
    return found


def format_quantity(value: Fraction) -> str:
    """``24``, ``0.5``, ``12.25``: how a person writes the (short decimal) value."""
    if value.denominator == 1:
        return str(value.numerator)
    return f"{float(value):.10f}".rstrip("0").rstrip(".")


def parse_quantity(text: str) -> Fraction:
    """The inverse of :func:`format_quantity`."""
    return Fraction(text)


def _short_decimal(value: Fraction) -> bool:
    denominator = value.denominator
    for prime in (2, 5):
        while denominator % prime == 0:
            denominator //= prime
    return value >= 0 and denominator == 1 and value.denominator <= _MAX_DENOMINATOR


def _results(a: Fraction, b: Fraction) -> list[tuple[Fraction, str, Fraction, Fraction]]:
    found = [(a, "+", b, a + b), (a, "*", b, a * b), (a, "-", b, a - b), (b, "-", a, b - a)]
    found += [(a, "/", b, a / b)] if b else []
    found += [(b, "/", a, b / a)] if a else []
    return found


def steps(pool: tuple[Fraction, ...]) -> list[ArithmeticStep]:
    """Every step on two quantities of ``pool`` with a short, non-negative result; one per pool it
    leaves (``2 + 2`` and ``2 * 2`` leave the same pool: the first is kept), pairs in pool order."""
    found: dict[tuple[Fraction, ...], ArithmeticStep] = {}
    for i, j in combinations(range(len(pool)), 2):
        rest = tuple(value for k, value in enumerate(pool) if k not in (i, j))
        for left, operator, right, result in _results(pool[i], pool[j]):
            after = (*rest, result)
            if _short_decimal(result) and tuple(sorted(after)) not in found:
                found[tuple(sorted(after))] = ArithmeticStep(left, operator, right, result, after)
    return list(found.values())
