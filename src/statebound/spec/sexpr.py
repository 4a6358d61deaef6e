"""A small s-expression reader that remembers where every atom and list starts.

Comments run from ``;`` or ``#`` to the end of the line (outside strings). Strings use double
quotes with backslash escapes. Every node carries its 1-based line and column so later stages can
point the spec author at the exact spot.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from statebound.errors import SpecError

__all__ = ["Atom", "SList", "SNode", "read_sexprs"]


@dataclass(frozen=True, slots=True)
class Atom:
    """A symbol (``Ques``, ``:text``, ``until_3``) or a string literal (``quoted=True``)."""

    value: str
    line: int
    column: int
    quoted: bool = False


@dataclass(frozen=True, slots=True)
class SList:
    """A parenthesised list."""

    items: tuple[SNode, ...]
    line: int
    column: int
    end_line: int = field(default=0, compare=False)
    end_column: int = field(default=0, compare=False)


SNode = Atom | SList

_TOKEN = re.compile(
    r"""
    (?P<space>[ \t\r\f\v]+) | (?P<newline>\n) | (?P<comment>[;\#][^\n]*)
    | (?P<open>\() | (?P<close>\))
    | (?P<string>"(?:[^"\\\n]|\\.)*")
    | (?P<badstring>"[^\n]*)
    | (?P<symbol>[^\s()";\#]+)
    """,
    re.VERBOSE,
)
_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\"}


def _unescape(body: str) -> str:
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), body)


def read_sexprs(text: str, *, source_name: str = "<spec>") -> list[SNode]:
    """Read every top-level expression in ``text``; raise :class:`SpecError` on bad nesting."""
    stack: list[tuple[int, int, list[SNode]]] = []
    top: list[SNode] = []
    line, line_start = 1, 0
    first_on_line = True
    unclosed: tuple[int, int, int] | None = None  # a "(" a later line is indented past: its line, column, that line
    for match in _TOKEN.finditer(text):
        kind, column = match.lastgroup, match.start() - line_start + 1
        if first_on_line and kind in ("open", "close", "string", "symbol") and unclosed is None:
            unclosed = _indented_past(stack, line, column)
        first_on_line = kind == "newline" or (first_on_line and kind in ("space", "comment"))
        if kind == "newline":
            line, line_start = line + 1, match.end()
        elif kind == "open":
            stack.append((line, column, []))
        elif kind == "close":
            if not stack:
                raise SpecError(
                    "unexpected ')': there is no open '(' to close; remove it",
                    line=line, column=column, source_name=source_name,
                )
            open_line, open_column, items = stack.pop()
            node = SList(tuple(items), open_line, open_column, line, column)
            (stack[-1][2] if stack else top).append(node)
        elif kind == "string":
            atom = Atom(_unescape(match.group()[1:-1]), line, column, quoted=True)
            (stack[-1][2] if stack else top).append(atom)
        elif kind == "badstring":
            raise SpecError(
                'unterminated string: expected a closing \'"\' on the same line',
                line=line, column=column, source_name=source_name,
            )
        elif kind == "symbol":
            (stack[-1][2] if stack else top).append(Atom(match.group(), line, column))
    if stack:
        end = f"{line}:{len(text) - line_start + 1}"
        if unclosed is not None:  # where the indentation says a ')' is missing
            open_line, open_column, sibling = unclosed
            raise SpecError(
                f"unbalanced parentheses: the '(' opened here is not closed before line {sibling}, which "
                f"is indented as its sibling: add ')' at the end of line {sibling - 1} (the text ends at "
                f"{end} with {len(stack)} '(' open)",
                line=open_line, column=open_column, source_name=source_name,
            )
        open_line, open_column, _ = stack[-1]
        raise SpecError(
            f"unbalanced parentheses: the '(' opened here is never closed "
            f"(expected {len(stack)} more ')' before the end of the text at {end})",
            line=open_line, column=open_column, source_name=source_name,
        )
    return top


def _indented_past(stack: list[tuple[int, int, list[SNode]]], line: int, column: int) -> tuple[int, int, int] | None:
    """The outermost list still open, opened on an earlier line at ``column`` or further right: a
    line starting there is indented as its sibling, not its child, so its ')' is likely missing."""
    for open_line, open_column, _ in stack:
        if open_line < line and open_column >= column:
            return open_line, open_column, line
    return None
