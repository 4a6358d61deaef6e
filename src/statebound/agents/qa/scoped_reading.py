"""What the scoped HotpotQA machine reads from text, with no model: the things a question names,
what kind of answer it wants, the alternatives it offers, and the answer-like spans of a page.

Every rule is a plain pattern (used by :mod:`statebound.agents.qa.scoped`):

- :func:`named_things`: quoted titles and runs of capitalised words ("Ronald Koeman", "Missouri
  Compromise"), joined across "of", "the"... ("Prime Minister of Italy"); "A and B" are two;
- :func:`answer_kind`: ``yesno`` (the question starts with "is", "are", "did"...), ``year``,
  ``date``, ``number`` or ``name`` (anything else: a span of capitalised words or a number);
- :func:`alternatives`: the two things a "which ... , A or B?" question chooses between;
- :func:`answer_spans`: dates, capitalised runs (with "Bath, Maine"-style places) and numbers.
"""

from __future__ import annotations

import re
from typing import Literal

from statebound.agents.question_text import QA_NOT_NAMES, QA_QUOTES, quoted_strings, without_quoted

__all__ = ["AnswerKind", "alternatives", "answer_kind", "answer_spans", "named_things", "sentences", "spans_of_kind"]

AnswerKind = Literal["yesno", "year", "date", "number", "name"]

_CONNECTORS = r"of|the|and|de|del|da|di|von|van|der|du|la|le|for|on|in"
_WORD = r"[A-Z0-9][\w.'&!-]*"
_RUN = re.compile(rf"{_WORD}(?:(?:\s+(?:{_CONNECTORS}))*\s+{_WORD})*")
_MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
_DATE = re.compile(rf"\b(?:\d{{1,2}} (?:{_MONTHS})(?:,? \d{{4}})?|(?:{_MONTHS}) \d{{1,2}}(?:, \d{{4}})?|(?:{_MONTHS}) \d{{4}})\b")
_YEAR = re.compile(r"\b(?:1[0-9]|20)\d\d\b")
_NUMBER = re.compile(r"\b\d[\d,]*(?:\.\d+)?\b")
_PLACE = re.compile(rf"\b{_WORD}(?: {_WORD})*, {_WORD}(?: {_WORD})*")
_LOOSE_JOINS = re.compile(r"\s+(in|on|for|and)\s+")  # connectors that may join two names as well as one
# a sentence ends at a stop after two lower-case letters or digits ("Nevada. It", not "M. Night")
_SENTENCE_END = re.compile(r"(?<=[a-z0-9]{2})[.?!]\s+")
_YES_NO = re.compile(r"^(?:is|are|was|were|do|does|did|can|could|has|have|had|will|would|should)\b", re.IGNORECASE)
_KINDS: tuple[tuple[str, AnswerKind], ...] = (
    (r"\b(?:what|which|in what|in which) year\b|\bwhen was .* (?:founded|established|formed|created|built|"
     r"released|opened)\b", "year"),
    (r"^when\b|\bwhat date\b|\bbirthday\b|\bon what day\b", "date"),
    (r"\bhow many\b|\bhow much\b|\bhow old\b|\bhow long\b|\bwhat (?:is|was) the (?:population|number)\b", "number"),
)


def _without_leading_non_names(words: list[str]) -> list[str]:
    """``words`` from the first that may be part of a name ("The Rome Protocols": "Rome Protocols")."""
    while words and words[0].lower() in QA_NOT_NAMES:
        words = words[1:]
    return words


def named_things(question: str) -> list[str]:
    """Quoted titles, then runs of capitalised words, in the question's order (a run that is only
    the question's first word is skipped: it is capitalised because it starts the sentence)."""
    found = [text.strip() for text in quoted_strings(question, QA_QUOTES)]
    rest = without_quoted(question, QA_QUOTES, replacement=" , ")
    for sentence in _SENTENCE_END.split(rest):
        for match in _RUN.finditer(sentence):
            first = match.start() == 0
            for part in re.split(r"\s+and\s+", match.group(0).rstrip(".,'")):  # "A and B": two things
                words = _without_leading_non_names(part.split())
                first = first and words == part.split()  # "Which Dutch": "Dutch" is not the first word
                run = " ".join(words).removesuffix("'s")
                if run and not (first and len(words) == 1) and run.lower() not in QA_NOT_NAMES and not run.isdigit():
                    found.append(run)
                first = False
    return list(dict.fromkeys(found))


def sentences(text: str) -> list[str]:
    """``text`` cut at each sentence's end (see ``_SENTENCE_END``)."""
    return [part.strip() for part in _SENTENCE_END.split(text) if part.strip()]


def answer_kind(question: str) -> AnswerKind:
    """What kind of answer ``question`` wants (the module docstring)."""
    text = " ".join(question.split())
    if _YES_NO.match(text):
        return "yesno"
    for pattern, kind in _KINDS:
        if re.search(pattern, text, re.IGNORECASE):
            return kind
    return "name"


def alternatives(question: str) -> tuple[str, str] | None:
    """The two things a question asks to choose between: "Which is older, A or B?", "Who was
    born first, A or B?", "Is A or B ...?"; None when it names no such pair."""
    text = " ".join(question.split()).rstrip(" ?")
    quoted = quoted_strings(text, QA_QUOTES)
    if len(quoted) == 2 and re.search(r"[\"”],? or [\"“]", text):
        return quoted[0], quoted[1]
    if re.match(r"(?:which|who) of\b", text, re.IGNORECASE) and len(named := named_things(text)) >= 2:
        return named[0], named[1]
    match = re.search(r"(?:,|:|\bbetween|^(?:is|was|are|were|which|who)(?: \w+)?)\s+([^,]+?),? or ([^,]+)$", text,
                      re.IGNORECASE) or re.search(r"^(?:is|was|are|were|which|who) ([^,]+?) or ([^,]+?) (?:the |a |an )?"
                                                  r"(?:more|less|older|younger|\w+er)\b", text, re.IGNORECASE)
    if match is None:
        return None
    first, second = (part.strip(" \"'") for part in match.groups())
    second = re.split(r"\s+(?:has|have|had|is|was|were|are|did|does)\b", second)[0]
    return (first, second) if first and second and first.lower() != second.lower() else None


def answer_spans(text: str) -> list[str]:
    """Everything in ``text`` that looks like a short answer: dates, places written "Town,
    Region", runs of capitalised words (and their parts around "in", "on", "for", "and") and
    numbers, each once. A lone capitalised word that starts a sentence counts only when the text
    also capitalises it elsewhere ("Originally" does not, "Kaine" does)."""
    parts = sentences(text)
    inside = {word.strip(".,;:'\"()") for part in parts for word in part.split()[1:] if word[:1].isupper()}
    found: list[str] = []
    for sentence in parts:
        found += _DATE.findall(sentence)
        found += [place for place in _PLACE.findall(sentence) if place.split()[0].lower() not in QA_NOT_NAMES]
        for match in _RUN.finditer(sentence):
            words = _without_leading_non_names(match.group(0).rstrip(".,'").split())
            run = " ".join(words)
            if not words or _NUMBER.fullmatch(run) or (match.start() == 0 and run not in inside and " " not in run):
                continue
            found += [run, *(part for part in _LOOSE_JOINS.split(run)[::2] if part != run)]
    found += _NUMBER.findall(text)
    return list(dict.fromkeys(span.strip(" ,.") for span in found if span.strip(" ,.")))


def spans_of_kind(spans: list[str], kind: AnswerKind) -> list[str]:
    """The spans that can answer a question of ``kind``: years, dates, numbers; for names, every
    span but bare years and numbers."""
    if kind == "year":
        return [s for s in spans if _YEAR.fullmatch(s)]
    if kind == "date":
        return [s for s in spans if _DATE.fullmatch(s) or _YEAR.fullmatch(s)]
    if kind == "number":
        return [s for s in spans if _NUMBER.fullmatch(s)]
    return [s for s in spans if not _NUMBER.fullmatch(s)]
