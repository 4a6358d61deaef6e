"""Finding state markers in text: splitting, dangling partial markers, common prefixes."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

__all__ = ["MarkerHit", "MarkerIndex", "common_prefix"]


def common_prefix(texts: Iterable[str]) -> str:
    """Longest common prefix (``"[Action"`` for ``"[Action]"`` and ``"[Action Input]"``)."""
    items = list(texts)
    return os.path.commonprefix(items) if items else ""


@dataclass(frozen=True, slots=True)
class MarkerHit:
    """One marker occurrence: the state it names and where it sits in the text."""

    state: str
    start: int
    end: int


@dataclass(frozen=True)
class MarkerIndex:
    """All markers of a spec, ready to search; the longest marker wins where several match."""

    markers: Mapping[str, str]  # marker text -> state name
    _pattern: re.Pattern[str] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        ordered = sorted(self.markers, key=len, reverse=True)
        object.__setattr__(self, "_pattern", re.compile("|".join(map(re.escape, ordered))))

    def find(self, text: str, start: int = 0) -> Iterator[MarkerHit]:
        """Every marker in ``text`` from ``start``, left to right, without overlaps."""
        for match in self._pattern.finditer(text, start):
            yield MarkerHit(self.markers[match.group()], match.start(), match.end())

    def spaced(self, text: str) -> str:
        """``text`` with a space after every marker that runs straight into its content
        (``[Thought]I need`` -> ``[Thought] I need``), for reading; nothing else changes."""
        parts, last = [], 0
        for hit in self.find(text):
            parts.append(text[last : hit.end])
            if hit.end < len(text) and not text[hit.end].isspace():
                parts.append(" ")
            last = hit.end
        return "".join(parts) + text[last:]

    def states_in(self, text: str) -> list[str]:
        """The sequence of states whose markers appear in ``text``."""
        return [hit.state for hit in self.find(text)]

    def split(self, text: str) -> tuple[str, list[tuple[str, str]]]:
        """``(text before the first marker, [(state, content), ...])``."""
        hits = list(self.find(text))
        if not hits:
            return text, []
        ends = [h.start for h in hits[1:]] + [len(text)]
        return text[: hits[0].start], [(h.state, text[h.end : e]) for h, e in zip(hits, ends)]

    def dangling(self, text: str) -> int:
        """Length of the longest suffix of ``text`` that is a proper prefix of some marker."""
        for size in range(min(len(text), max(map(len, self.markers), default=1) - 1), 0, -1):
            tail = text[-size:]
            if any(m.startswith(tail) and m != tail for m in self.markers):
                return size
        return 0
