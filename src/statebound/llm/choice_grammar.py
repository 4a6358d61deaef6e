"""A GBNF grammar whose only sentences are given texts: how a choice among them is held to them.

A server that holds a reply to a list of texts itself (vLLM's ``structured_outputs.choice``) is sent
the list instead: :func:`offered` reads it back from the grammar.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

__all__ = ["choice_grammar", "is_choice_grammar", "offered"]

_GRAMMAR_HEAD = "root ::= "
_LITERAL = r'"(?:[^"\\]|\\.)*"'
_CHOICE_GRAMMAR = re.compile(re.escape(_GRAMMAR_HEAD) + f"{_LITERAL}(?: \\| {_LITERAL})*")


def choice_grammar(candidates: Sequence[str]) -> str:
    """A GBNF grammar whose only sentences are ``candidates``."""
    if not candidates:
        raise ValueError("a choice grammar needs at least one candidate")
    return _GRAMMAR_HEAD + " | ".join(json.dumps(candidate) for candidate in candidates)


def offered(grammar: str) -> list[str]:
    """The candidates of a :func:`choice_grammar`, read back from its GBNF."""
    if not grammar.startswith(_GRAMMAR_HEAD):
        raise ValueError(f"not a choice grammar: {grammar[:60]!r}")
    return [json.loads(literal) for literal in re.findall(_LITERAL, grammar)]


def is_choice_grammar(grammar: str) -> bool:
    """``grammar`` is exactly a :func:`choice_grammar` (one rule, an alternation of literals)."""
    return _CHOICE_GRAMMAR.fullmatch(grammar) is not None
