"""Reading question text: the rules the SQL, Bash and QA machines share, in one place.

- :func:`singular_forms` / :func:`singular`: English plurals (``-s``, ``-es``, ``-ies``), for
  matching a question's words with table, column and page names;
- :func:`quoted_strings` / :func:`without_quoted`: what a question quotes, with the quote marks
  each benchmark's questions use as data (:data:`SQL_QUOTES`, :data:`QA_QUOTES`,
  :data:`BASH_QUOTES`);
- the words that start questions and name nothing, as data: :data:`QUESTION_WORDS`, and the
  stop lists built on it (:data:`SQL_NOT_VALUES`, :data:`QA_NOT_NAMES`);
- numbers spelt out, as data: :data:`NUMBER_WORDS` (one to ten; GSM8K's quantities add more), and
  :func:`whole_number` (``"5"`` or ``"five"`` -> 5).

Each machine keeps its own reading of what a question asks (agents/sql/reading.py,
agents/qa/scoped_reading.py, agents/bash/reading.py) and uses these for the parts they share.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from types import MappingProxyType

__all__ = ["BASH_QUOTES", "NUMBER_WORDS", "QA_NOT_NAMES", "QA_QUOTES", "QUESTION_WORDS", "SQL_NOT_VALUES", "SQL_QUOTES",
           "QuoteMarks", "quoted_strings", "singular", "singular_forms", "whole_number", "without_quoted"]

QuoteMarks = tuple[tuple[str, str], ...]  # (opening, closing) pairs
SQL_QUOTES: QuoteMarks = (('"', '"'), ("'", "'"), ("“", "”"))
QA_QUOTES: QuoteMarks = (('"', '"'), ("“", "”"))  # not ' : names hold apostrophes (O'Brien, Gino's)
BASH_QUOTES: QuoteMarks = (('"', '"'), ("'", "'"), ("`", "`"))  # as a word: 'Hello World', not don't

QUESTION_WORDS = frozenset("what which who whom whose where when how".split())
# capitalised words that start questions or name SQL ideas, never values
SQL_NOT_VALUES = QUESTION_WORDS | frozenset(
    "list show find give return count tell i please select sort order display get provide id ids the a an of in for "
    "and or".split())
# capitalised words that start questions or sentences and name nothing
QA_NOT_NAMES = QUESTION_WORDS | frozenset(
    "why is are was were do does did can could has have had will would in on at of the a an this that these those for "
    "from by to as and or it its he she they his her their".split())

# numbers questions spell out ("at least two courses", "the three oldest"), in this order in patterns
NUMBER_WORDS: Mapping[str, int] = MappingProxyType({
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10})


def whole_number(word: str) -> int | None:
    """The whole number ``word`` writes in digits or spells out (:data:`NUMBER_WORDS`, any case);
    None for anything else."""
    if word.isdigit():
        return int(word)
    return NUMBER_WORDS.get(word.lower())


def singular_forms(word: str) -> frozenset[str]:
    """``word`` in lower case and every singular it may be the plural of: ``tables`` -> tables,
    table; ``classes`` -> classes, classe, class; ``countries`` -> countries, countrie, countri,
    country (every reading is kept: a name matches when any of them is its word)."""
    lower = word.lower()
    forms = {lower}
    if lower.endswith("s") and not lower.endswith("ss") and len(lower) > 3:
        forms.add(lower[:-1])
    if lower.endswith("es") and len(lower) > 4:
        forms.add(lower[:-2])
    if lower.endswith("ies") and len(lower) > 4:
        forms.add(lower[:-3] + "y")
    return frozenset(forms)


def singular(word: str) -> str:
    """One singular for ``word`` (lower case), for names compared word for word: ``countries`` ->
    country, ``airports`` -> airport, ``address`` -> address."""
    lower = word.lower()
    if lower.endswith("ies") and len(lower) > 4:
        return lower[:-3] + "y"
    if lower.endswith("s") and not lower.endswith("ss") and len(lower) > 3:
        return lower[:-1]
    return lower


@functools.lru_cache(maxsize=8)
def _quotes(marks: QuoteMarks, as_word: bool) -> re.Pattern[str]:
    """One group per pair: the text between the marks (with ``as_word``, only where the opening
    mark starts a word and the closing one ends it)."""
    if as_word:  # the shortest text up to a closing mark that ends a word (a quoted "don't" stays whole)
        pairs = "|".join(f"{re.escape(open_)}(.+?){re.escape(close)}(?=[\\s.,;:)]|$)" for open_, close in marks)
        return re.compile(f"(?:(?<=[\\s(])|^)(?:{pairs})")
    pairs = "|".join(f"{re.escape(open_)}([^{re.escape(close)}]+){re.escape(close)}" for open_, close in marks)
    return re.compile(pairs)


def quoted_strings(text: str, marks: QuoteMarks, *, as_word: bool = False) -> list[str]:
    """What ``text`` quotes with ``marks``, in order, as quoted (spaces kept: "Remove the spaces
    around '  Hello  '" quotes them), blank ones left out."""
    return [found for match in _quotes(marks, as_word).finditer(text)
            for found in match.groups() if found is not None and found.strip()]


def without_quoted(text: str, marks: QuoteMarks, *, replacement: str = " ") -> str:
    """``text`` with each quoted string (marks included) replaced."""
    return _quotes(marks, False).sub(replacement, text)
