"""Ending a blocking llama.cpp call early when whoever waits for it has given up.

A call on a ``Llama`` runs in a worker thread, which cannot be interrupted from outside: a
cancelled coroutine stops waiting, but the thread would go on reading the prompt and generating
up to ``max_tokens`` tokens, holding the model's lock (and a stopping process) all that time.
:func:`cancellable` makes every evaluation step on the model (one batch of a prompt, one generated
token, one chunk of a scored text) first look at a ``threading.Event``; once it is set, the next
step raises ``asyncio.CancelledError`` instead of running. The event is only read, so a call that
is not cancelled computes exactly what it would without it.

The model stays consistent after such a stop: the step that raises has not touched the KV cache,
and llama-cpp-python counts only the steps that ran, so the next call reuses what they evaluated.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from llama_cpp import Llama

__all__ = ["cancellable"]


def _raise_if_set(cancel: threading.Event) -> None:
    if cancel.is_set():
        raise asyncio.CancelledError("the llama.cpp call was cancelled")


@contextmanager
def cancellable(llama: Llama, cancel: threading.Event | None) -> Iterator[None]:
    """While inside, each evaluation step on ``llama`` raises ``asyncio.CancelledError`` once
    ``cancel`` is set (also on entry if it already is). ``None``: nothing changes. Not
    thread-safe: hold the model's lock."""
    if cancel is None:
        yield
        return
    _raise_if_set(cancel)
    context = llama._ctx
    decode = context.decode  # every evaluation of llama-cpp-python and of scoring goes through it

    def decode_unless_cancelled(batch: Any) -> None:
        _raise_if_set(cancel)
        decode(batch)

    context.decode = decode_unless_cancelled  # type: ignore[method-assign]
    try:
        yield
    finally:
        del context.decode  # the class's method again
