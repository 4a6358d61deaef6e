"""A request the server refuses: the HTTP status and one line saying what is wrong and what exists."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["Problem", "missing"]


class Problem(Exception):
    """Answered as ``{"detail": message}`` with ``status``; nothing was stored."""

    def __init__(self, status: int, message: str) -> None:
        self.status = status
        super().__init__(message)


def missing(what: str, name: str, existing: Iterable[str]) -> Problem:
    """404: no ``what`` called ``name``, with the names that exist (the closest first)."""
    import difflib

    names = sorted(set(existing))
    close = difflib.get_close_matches(name, names, n=3)
    listed = ", ".join([*close, *(n for n in names if n not in close)][:10])
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return Problem(404, f"no {what} {name!r}{hint} ({what}s: {listed or 'none yet'})")
