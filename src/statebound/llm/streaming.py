"""Token streaming: the text of a reply handed on piece by piece as the model writes it.

A caller that wants the pieces sets a sink for the duration of its request with
:func:`streaming_to`; a backend that can stream (the embedded model, a server by server-sent
events) asks :func:`token_sink` whether anyone listens and hands each piece to it. The sink is a
context variable, so it follows the request into the worker thread the embedded backend runs in,
and requests made outside it (scoring, other runs) stream nothing. What a backend returns does not
change: the same :class:`~statebound.llm.base.Completion`, usage included.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["TokenSink", "streaming_to", "token_sink"]

TokenSink = Callable[[str], None]
_sink: ContextVar[TokenSink | None] = ContextVar("statebound_token_sink", default=None)


def token_sink() -> TokenSink | None:
    """Who receives the pieces of the reply being generated now (None: nobody, do not stream)."""
    return _sink.get()


@contextmanager
def streaming_to(sink: TokenSink | None) -> Iterator[None]:
    """Hand every piece of text generated inside the block to ``sink`` (None: stream nothing)."""
    token = _sink.set(sink)
    try:
        yield
    finally:
        _sink.reset(token)
