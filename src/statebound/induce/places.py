"""Where the things tasks name were seen: a prior learnt from the teachers' observations.

A teacher's search shows more than the one place it took the object from: each observation
answering an action at a place (the words in the action's ``{seen}``/``{any}`` slots: ``go to
cabinet 3``, ``open drawer 1``) names what lies there. :func:`count_places` counts, for every word
that some task named as a slot value (``mug``, ``apple``), the places whose observation named it.
At run time :func:`places_hint` turns the counts for the task's own slot values into one line the
model reads before it picks (``A mug was seen at: countertop (12), cabinet (7).``), listing only
the places among the candidates; the candidates themselves are unchanged, so the random control
runs the same machine.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence

__all__ = ["Places", "count_places", "places_hint"]

Places = Mapping[str, Mapping[str, int]]  # thing -> place -> times an observation there named it


def count_places(visits: Iterable[tuple[Sequence[str], Collection[str]]], named: Collection[str]) -> dict[str, dict[str, int]]:
    """For each word of ``named`` (the tasks' slot values), how often an observation at each place
    named it; ``visits``: per action, its place words and the words of the observation answering
    it. Most seen first, things in alphabetical order."""
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for where, answer in visits:
        for thing in set(answer) & set(named):
            counts[thing].update(w for w in dict.fromkeys(where) if w != thing)
    return {thing: dict(counts[thing].most_common()) for thing in sorted(counts) if counts[thing]}


def places_hint(places: Places, things: Iterable[str], candidates: Sequence[str], *, most: int = 4) -> str | None:
    """The line telling the model where ``things`` were seen, among the places ``candidates``
    name (the ``most`` most seen; None when the counts say nothing about these candidates)."""
    words = {word for candidate in candidates for word in candidate.split()}
    lines = []
    for thing in dict.fromkeys(t for t in things if t):
        here = sorted(((place, n) for place, n in places.get(thing, {}).items() if place in words and n > 0),
                      key=lambda item: -item[1])
        if here:
            listed = ", ".join(f"{place} ({n})" for place, n in here[:most])
            lines.append(f"In solved games, a {thing} was seen at: {listed}.")
    return "\n".join(lines) or None
