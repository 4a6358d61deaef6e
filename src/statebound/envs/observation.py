"""One bound on what an environment shows the agent: observations are cut at a number of characters.

Every environment passes the text it built through :func:`bound_observation` before returning it,
so no command output, query result or page can reach a prompt, a trajectory or a store whole when
it is huge. The cut keeps the start and says how much was left out.
"""

from __future__ import annotations

__all__ = ["DEFAULT_MAX_OBSERVATION_CHARS", "bound_observation"]

DEFAULT_MAX_OBSERVATION_CHARS = 20_000
"""Far above what any task's useful observation needs (a few hundred characters), far below what
would flood a model's context or a run's store."""


def bound_observation(text: str, max_chars: int | None = DEFAULT_MAX_OBSERVATION_CHARS) -> str:
    """``text`` if it has at most ``max_chars`` characters, else its start and a note of the cut.

    The note (under 100 characters) comes after the kept ``max_chars``; None means no bound.
    """
    if max_chars is None or len(text) <= max_chars:
        return text
    if max_chars < 0:
        raise ValueError(f"max_chars must be at least 0, not {max_chars}")
    cut = len(text) - max_chars
    return (f"{text[:max_chars]}\n[observation cut: {cut:,} of {len(text):,} characters not shown; "
            f"the limit is {max_chars:,}]")
