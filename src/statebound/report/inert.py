"""Text that came from outside (a model, a tool, a task, a store, the sandbox) made inert for a
terminal: every CLI printer passes such text through :func:`inert` (a string) or
:func:`inert_text` (a rich ``Text``, which rich never reads as markup, so ``[/b]`` is printed as is).

Control characters are shown escaped (``\\x1b``, ``\\r``, ``\\u202e``): no escape sequence reaches
the terminal (a window title, a cleared screen, a moved cursor, text that hides what follows).
A run of non-space characters longer than ``fold`` is folded into lines of ``fold`` characters,
and text longer than ``limit`` is cut with its length said; both take linear time, and so does
printing the ``Text`` (rich's markup parser and highlighter, which a string goes through, take
time growing with the square of one long word: 60,000 characters took a minute;
``benchmarks/terminal_long_word.py``).

```python
inert("ok \\x1b]0;pwned\\x07 [/b]")          # 'ok \\\\x1b]0;pwned\\\\x07 [/b]'
inert("x" * 50, limit=20)                 # 'xxxxxxxxxxxxxxxxxxxx… (50 characters)'
```
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.text import Text

__all__ = ["CELL_LIMIT", "FOLD", "inert", "inert_text"]

FOLD = 100
"""Longest run of non-space characters printed unbroken (a longer one is folded)."""

CELL_LIMIT = 300
"""Longest table cell or title part printed whole (a longer one is cut, its length said)."""

# C0 and C1 controls and DEL, the invisible marks that reorder or hide text (bidirectional
# overrides and isolates, line and paragraph separators), and lone surrogates (no terminal can be
# written them); newline and tab stay as they are.
_UNSAFE = ("\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f\\u061c\\u200e\\u200f\\u2028\\u2029\\u202a-\\u202e\\u2066-\\u2069"
           "\\ud800-\\udfff")
_CONTROL = re.compile(f"[{_UNSAFE}]")
_CONTROL_ONE_LINE = re.compile(f"[{_UNSAFE}\\n\\t]")
_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    return _NAMED.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def _folder(width: int) -> re.Pattern[str]:
    return re.compile(f"(?<!\\S)\\S{{{width + 1},}}")  # anchored at a word's start: linear


def inert(text: object, *, limit: int | None = None, fold: int | None = FOLD, one_line: bool = False) -> str:
    """``text`` (made a string) safe to print: cut to ``limit`` characters with its length said,
    control characters escaped (``one_line``: newlines and tabs too), runs of non-space characters
    longer than ``fold`` folded (``None``: neither cut nor folded)."""
    value = str(text)
    note = ""
    if limit is not None and len(value) > limit:
        value, note = value[:limit], f"… ({len(value):,} characters)"
    value = (_CONTROL_ONE_LINE if one_line else _CONTROL).sub(_escape, value)
    if fold is not None and not one_line:
        value = _folder(fold).sub(lambda m: "\n".join(m[0][i:i + fold] for i in range(0, len(m[0]), fold)), value)
    return value + note


def inert_text(text: object, style: str = "", *, limit: int | None = None, fold: int | None = FOLD,
               one_line: bool = False) -> Text:
    """``text`` as :func:`inert` makes it, as a rich ``Text`` in ``style``."""
    from rich.text import Text

    return Text(inert(text, limit=limit, fold=fold, one_line=one_line), style=style)
