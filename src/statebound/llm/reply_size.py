"""The bound on one model reply: a reply longer than ``MAX_REPLY_BYTES`` (UTF-8) is cut, with a note.

Every :class:`~statebound.llm.base.Choice` a backend builds passes its text through
:func:`bound_reply`, so no reply reaches a flow's history, a trajectory, a cache or a run's store
whole when a server sends hundreds of megabytes (issue #38: a 200 MB reply was stored whole).
"""

from __future__ import annotations

__all__ = ["MAX_REPLY_BYTES", "bound_reply"]

MAX_REPLY_BYTES = 1 << 20
"""1 MiB: some 250,000 tokens of English, beyond any max_tokens a run asks for."""


def bound_reply(text: str, max_bytes: int = MAX_REPLY_BYTES) -> str:
    """``text`` if its UTF-8 form has at most ``max_bytes``, else its start and a note of the cut."""
    if len(text) * 4 <= max_bytes:  # no character takes more than 4 bytes: surely within
        return text
    encoded = text.encode("utf-8", "surrogatepass")
    if len(encoded) <= max_bytes:
        return text
    kept = encoded[:max_bytes].decode("utf-8", "ignore")  # a split character is dropped whole
    return (f"{kept}\n[reply cut: {len(encoded) - max_bytes:,} of {len(encoded):,} bytes not kept; "
            f"the limit is {max_bytes:,}]")
