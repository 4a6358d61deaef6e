"""The embedded backend's streamed replies: each piece handed to the sink as llama-cpp-python
yields it, and the reply gathered into the shape of an unstreamed one.

llama-cpp-python sends no usage with a stream. The pieces are counted as the completion's tokens
(it yields one per token, holding back only the bytes of a character split across tokens). The
prompt's tokens are what the context holds afterwards minus what the reply added: every generated
token but the last is evaluated, and the last one is shown only when the reply was cut at
``max_tokens`` (otherwise it is the end of text, which neither usage counts, or the token completing a stop sequence, which
the unstreamed usage counts and this one does not).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from statebound.llm.streaming import TokenSink

if TYPE_CHECKING:
    from llama_cpp import Llama

__all__ = ["gather_stream"]


def gather_stream(llama: Llama, chunks: Iterable[dict[str, Any]], sink: TokenSink, *, chat: bool) -> dict[str, Any]:
    """Hand each piece of ``chunks`` to ``sink``; return the reply as the unstreamed call would."""
    pieces: list[str] = []
    finish = "stop"
    for chunk in chunks:
        choice = chunk["choices"][0]
        piece = (choice.get("delta") or {}).get("content") if chat else choice.get("text")
        if piece:
            pieces.append(piece)
            sink(piece)
        finish = choice.get("finish_reason") or finish
    text = "".join(pieces)
    completion = len(pieces)
    evaluated = completion - 1 if finish == "length" else completion  # the last one of a cut reply is not
    reply: dict[str, Any] = {"message": {"role": "assistant", "content": text}} if chat else {"text": text}
    return {"choices": [{**reply, "finish_reason": finish}],
            "usage": {"prompt_tokens": llama.n_tokens - evaluated, "completion_tokens": completion}}
