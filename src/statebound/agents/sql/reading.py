"""What a Spider question asks for, read from its words alone (no model): the shape of the query.

The scoped SQL machine (:mod:`statebound.agents.sql.scoped`) lets the model choose the schema
items (table, columns, which match of a value); the shape comes from here: whether the answer
is a count or an aggregate, grouped, sorted, limited, filtered by which literal values and
number comparisons, and how many columns are asked for. Every rule is a plain word pattern; a
question that fits none reads as "list one column".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from statebound.agents.question_text import (
    NUMBER_WORDS,
    SQL_NOT_VALUES,
    SQL_QUOTES,
    quoted_strings,
    singular_forms,
    whole_number,
    without_quoted,
)

__all__ = ["Comparison", "Reading", "read_question"]

Direction = Literal["ASC", "DESC"]
Aggregate = Literal["avg", "min", "max", "sum"]

_AGGREGATES: tuple[tuple[str, Aggregate], ...] = (
    (r"average|mean|avg", "avg"), (r"minimum|min", "min"), (r"maximum|max", "max"), (r"sum|total", "sum"))
_COUNT = (r"how many|count|(?:the|a|total|what|find|show|give|and|corresponding|respective|their|its|each) "
          r"numbers? of|^numbers? of")
_GROUP = r"each|every|corresponding|respective|for different|of different|by different"
_DISTINCT = r"different|distinct|unique"
_SORT = r"order|ordered|sorted|sort|alphabetical|alphabetically|lexicographical|lexicographically|ascending|descending|ranked"
_DESCENDING = (r"descending|decreasing|reverse|reversed|reversely|from (?:the )?(?:highest|largest|most|oldest|biggest|"
               r"greatest|longest|latest|newest|heaviest)|(?:highest|largest|oldest|most|biggest|greatest) to")
_MOST = r"most|highest|largest|biggest|greatest|oldest|longest|tallest|heaviest|latest|newest|top|best|richest|maximum"
_LEAST = r"least|lowest|smallest|youngest|shortest|fewest|earliest|cheapest|minimum|lightest"
_BY_COUNT = r"most|fewest|least"
_GREATER = r"more than|greater than|larger than|bigger than|higher than|over|above|exceeds?|exceeding|older than|after|later than|longer than|heavier than"
_AT_LEAST = r"at least|no less than|or more|not less than"
_LESS = r"less than|fewer than|smaller than|lower than|below|under|younger than|before|earlier than|shorter than|lighter than"
_AT_MOST = r"at most|no more than|or less|or fewer|not more than"
_NOT = {">": "<=", "<": ">=", ">=": "<", "<=": ">"}
_NEGATION = re.compile(r"\b(?:not|no|never|without|other than|except|n't)\b|n't\b", re.IGNORECASE)
_SUBSTRING = re.compile(r"\b(?:contains?|containing|substring|includes?|including|like)\b|\bin (?:its|their|the) name", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Comparison:
    """A number the question compares a column with: ``column <op> value``; ``words``: the
    question's words around it (what a choice of the column is asked about)."""

    op: str
    value: str
    words: str = ""


@dataclass(frozen=True, slots=True)
class Reading:
    """The shape of the query a question asks for (see the module docstring)."""

    count: bool = False  # how many / number of
    distinct: bool = False  # different / distinct / unique
    aggregates: tuple[Aggregate, ...] = ()  # in the question's order
    group: bool = False  # for each ... (with a count or an aggregate)
    sort: Direction | None = None  # an explicit ordering (order by, sorted, alphabetical...)
    superlative: Direction | None = None  # the most / the lowest ...: ORDER BY ... LIMIT
    by_count: bool = False  # the superlative counts rows: "the most matches" (GROUP BY ... count(*))
    limit: int | None = None
    asked: int = 1  # how many columns the question asks for
    literals: tuple[str, ...] = ()  # text values to find in the table
    numbers: tuple[Comparison, ...] = ()  # number comparisons for WHERE
    having: Comparison | None = None  # a comparison on the count of a group: "with more than 50 players"
    negated: bool = False  # "do not", "other than"
    either: bool = False  # the conditions are alternatives (" or ")
    substring: bool = False  # a text value is matched as a substring (LIKE)
    measure_at: int = 0  # where the question names the count or aggregate (orders it against the group column)
    # the words each part is about, for the choice of its column ("" when the part is absent)
    answer_words: str = ""  # "continent name", "maximum net worth"
    sort_words: str = ""  # "ordered by age from the oldest to the youngest", "the highest earnings"
    group_words: str = ""  # "each citizenship"
    counted_words: str = ""  # what a count counts: "how many concerts play there", "at least two courses"

    @property
    def needs_measure(self) -> bool:
        """An aggregate needs the column it aggregates."""
        return bool(self.aggregates)


def _has(pattern: str, text: str) -> re.Match[str] | None:
    return re.search(rf"\b(?:{pattern})\b", text, re.IGNORECASE)


def _literals(question: str) -> tuple[str, ...]:
    """Quoted strings, then runs of capitalised words that are not the question's own words."""
    found: list[str] = [text.strip() for text in quoted_strings(question, SQL_QUOTES)]
    unquoted = without_quoted(question, SQL_QUOTES)
    words = [w.rstrip(".") for w in re.findall(r"[A-Za-z][\w.&-]*(?:'s)?", unquoted)]
    run: list[str] = []
    for position, word in enumerate(words + [""]):
        bare = word.removesuffix("'s")
        capital = bool(bare) and bare[0].isupper() and bare.lower() not in SQL_NOT_VALUES and position > 0
        if capital:
            run.append(bare)
            continue
        if run:
            found.append(" ".join(run))
            run = []
    return tuple(dict.fromkeys(found))


def _comparisons(question: str) -> list[tuple[Comparison, str]]:
    """Each number in the question with its comparison and the word after it (what it counts)."""
    found = []
    words = "|".join(NUMBER_WORDS)
    for match in re.finditer(rf"(?<![\w.])(\d+(?:\.\d+)?|{words})(?!\w|\.\d)", question, re.IGNORECASE):
        before = question[: match.start()].lower()[-30:]
        rest = re.sub(r"^\s*or (?:more|less|fewer)\b", "", question[match.end():])
        after = rest.strip().split(" ", 1)[0].strip("?.,").lower()
        if re.search(r"\b(?:top|first|the)\s*$", before) or re.match(rf"(?:{_MOST}|{_LEAST})\b", after):
            continue  # "the 3 lowest", "top 5": a limit, not a value
        op = "="
        if re.search(rf"\b(?:{_AT_LEAST})\s*$", before) or re.match(r"or more\b", question[match.end():].strip()):
            op = ">="
        elif re.search(rf"\b(?:{_AT_MOST})\s*$", before):
            op = "<="
        elif re.search(rf"\b(?:{_GREATER})\s+(?:[a-z]+\s+)?$", before + " "):
            op = ">"
        elif re.search(rf"\b(?:{_LESS})\s+(?:[a-z]+\s+)?$", before + " "):
            op = "<"
        if re.search(r"\bnot\s+(?:\w+\s+)?(?:than\s+)?$", before) or re.search(r"\bnot (?:higher|more|greater|larger|less|lower|fewer|smaller) than\s*$", before):
            op = _NOT.get(op, op)
        around = " ".join([*question[: match.start()].split()[-4:], match.group(1), after]).strip()
        value = match.group(1)
        if not value[0].isdigit():
            if op == "=" or value.lower() == "one":
                continue  # "one of", "two courses" without a comparison: words, not values
            value = str(NUMBER_WORDS[value.lower()])
        found.append((Comparison(op, value, around), after))
    return found


def _limit(question: str) -> int | None:
    match = re.search(rf"\b(?:top|first)\s+(\d+|{'|'.join(NUMBER_WORDS)})\b|\b(\d+|{'|'.join(NUMBER_WORDS)})\s+"
                      rf"(?:{_MOST}|{_LEAST}|most|least)\b", question, re.IGNORECASE)
    if match is None:
        return None
    return whole_number(match.group(1) or match.group(2))


def _head(question: str) -> str:
    """The words that name what is asked for: those before the first word that starts the
    question's subject ("of", "for", "from", "in", "who", "that"...), after a list verb."""
    tail = re.split(r"\b(?:return|list|show|give|find)\b(?! all\b)", question, flags=re.IGNORECASE)
    part = tail[-1] if len(tail) > 2 or (len(tail) == 2 and tail[0].strip()) else question
    head = re.split(r"\b(?:of|for|from|in|on|who|that|which|whose|with|where|by|across|along|ordered|sorted)\b",
                    part, maxsplit=1, flags=re.IGNORECASE)[0]
    head = re.sub(r"^\s*(?:what|which|show|list|give|find|return|tell me|display)\b(?:.*?\b(?:is|are|me|the|all)\b)?",
                  "", head, flags=re.IGNORECASE)
    return " ".join(head.strip(" ,.?").split())


def _asked(question: str) -> int:
    """How many columns are asked for: the items listed in the :func:`_head`."""
    return 1 + len(re.findall(r",|\band\b", _head(question)))


def _from(match: re.Match[str] | None, text: str, *, words: int = 8) -> str:
    """Up to ``words`` words of ``text`` from ``match`` on, stopping at a comma or a question mark."""
    if match is None:
        return ""
    return " ".join(re.split(r"[,?;]", text[match.start():])[0].split()[:words])


def read_question(question: str, *, tables: tuple[str, ...] = ()) -> Reading:
    """The shape of the query ``question`` asks for; ``tables`` (the database's, lower case)
    tell counted things ("the most matches", "more than 50 players") from measured ones."""
    text = " ".join(question.split())
    aggregates: list[tuple[int, Aggregate]] = []
    for pattern, name in _AGGREGATES:
        for match in re.finditer(rf"\b(?:{pattern})\b", text, re.IGNORECASE):
            if name == "sum" and re.match(r"\s*number\b", text[match.end():], re.IGNORECASE):
                continue  # "the total number of": a count
            aggregates.append((match.start(), name))
    aggregates = [(at, name) for at, name in sorted(aggregates)
                  if not re.search(rf"\b(?:{_MOST}|{_LEAST})\s+$", text[:at], re.IGNORECASE)]  # "highest average"
    counted = _has(_COUNT, text) is not None
    if aggregates and counted and not re.search(r"\b(?:sum|total)\b", text, re.IGNORECASE):
        counted = _has(r"how many", text) is not None and not aggregates
    if counted and all(a == "sum" for _, a in aggregates):
        aggregates = []  # "how many ... in total": a count
    tables_named = {t.lower() for t in tables}

    def names(word: str) -> bool:  # the word names a table, in the singular or the plural
        return bool(singular_forms(word) & tables_named)
    group = bool((counted or aggregates) and _has(_GROUP, text) and not _has(r"each time", text)
                 and not re.search(r"\b(?:how many|number of)\s+(?:different|distinct|unique)\b", text, re.IGNORECASE))
    distinct = bool(_has(_DISTINCT, text)) and not group
    sort: Direction | None = None
    if _has(_SORT, text) or re.search(r"\bin (?:the )?order\b", text, re.IGNORECASE):
        sort = "DESC" if _has(_DESCENDING, text) else "ASC"
    superlative: Direction | None = None
    by_count = False
    counted_words = _from(_has(_COUNT, text), text, words=5) if counted else ""
    if sort is None:
        most, least = _has(_MOST, text), _has(_LEAST, text)
        if most or least:
            first = min((m for m in (most, least) if m), key=lambda m: m.start())
            superlative = "DESC" if first is most else "ASC"
            following = text[first.end():].split()
            nxt = following[0].strip("?.,").lower() if following else ""
            counted_noun = following[2].strip("?.,").lower() if len(following) > 2 else ""
            by_count = (bool(re.fullmatch(_BY_COUNT, first.group(0), re.IGNORECASE)) and (
                names(nxt) or nxt in ("common", "frequent", "popular", "often", "times"))) or (
                " ".join(following[:2]).lower() == "number of" and names(counted_noun))
            if by_count:
                counted_words = _from(first, text, words=4)
            if re.fullmatch(r"maximum|minimum", first.group(0), re.IGNORECASE):
                superlative = None  # an aggregate, read above
    comparisons = _comparisons(text)
    having = next((c for c, counted_word in comparisons if names(counted_word)), None)
    numbers = tuple(c for c, counted_word in comparisons if c is not having)
    if having is not None:
        group, counted_words = True, having.words
    literals = _literals(text)
    count_at = _has(_COUNT + "|" + "|".join(p for p, _ in _AGGREGATES), text)
    group_at = _has(_GROUP, text)
    return Reading(
        count=counted and not aggregates,
        distinct=distinct,
        aggregates=tuple(a for _, a in aggregates),
        group=group,
        sort=sort,
        superlative=superlative,
        by_count=by_count,
        limit=_limit(text) or (1 if superlative else None),
        asked=_asked(text),
        literals=literals,
        numbers=numbers,
        having=having,
        negated=bool(_NEGATION.search(text)),
        either=bool(re.search(r"\bor\b(?! (?:more|less|fewer)\b)", text, re.IGNORECASE)),
        substring=bool(_SUBSTRING.search(text)),
        measure_at=count_at.start() if count_at is not None else 0,
        answer_words=_from(_has("|".join(p for p, _ in _AGGREGATES), text), text, words=4) if aggregates
        else _head(text),
        sort_words=_from(_has(_SORT, text) if sort else _has(f"{_MOST}|{_LEAST}", text), text),
        group_words=_from(group_at, text, words=4) if group else "",
        counted_words=counted_words,
    )
