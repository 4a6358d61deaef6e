"""What each kind of OpenAI-compatible server can do, and how statebound asks it: server profiles.

An ``openai:MODEL`` model is opened against whatever server its ``base_url`` names; the profile of
that server (detected, :mod:`statebound.llm.server_probe`, or forced with the model option
``profile=NAME``) sets how grammars, JSON schemas, tool calls and scoring requests are sent. Each
model option given explicitly (``grammar_field``, ``response_format``, ``tool_calls``,
``top_logprobs``, ``scoring``) still wins over the profile.

Scoring transports (how the log-probabilities of given text are read, :mod:`statebound.llm.server_scoring`):

- ``next-token`` (llama.cpp's servers): each of the text's tokens forced as the next token by a
  ``logit_bias`` (one request per token), its log-probability read from the generated token's,
  which the server computes from the raw logits; the prompt is the chat template rendered here;
- ``echo`` (``/completions`` with ``echo`` and ``logprobs``: SGLang, and any server a self-check
  finds aligned): the prompt's own tokens' log-probabilities, aligned with the server's tokens;
- ``prompt-logprobs`` (vLLM): token ids in, ``prompt_logprobs`` out, every candidate of a choice in
  one request.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Literal, get_args

from statebound.errors import DefinitionError

__all__ = [
    "PROFILES",
    "ResponseFormat",
    "ScoringTransport",
    "ServerProfile",
    "Tokenizer",
    "ToolCalls",
    "profile_named",
]

ResponseFormat = Literal["json_schema", "json_object", "grammar", "none"]  # how a Request.schema is sent
ToolCalls = Literal["native", "grammar", "none"]  # how Request.tools are sent: the server's tools, or a grammar
ScoringTransport = Literal["next-token", "echo", "prompt-logprobs"]
Tokenizer = Literal["llama-cpp-python", "llama-server", "vllm"]  # whose tokenize endpoint the server has


@dataclass(frozen=True, slots=True)
class ServerProfile:
    """How statebound talks to one kind of server (see the module docstring).

    ``grammar_field``: the request field a GBNF grammar goes in (None: grammars refused);
    ``choice_field``: the server holds a reply to a list of texts itself (vLLM's
    ``structured_outputs.choice``); ``scoring``: the scoring transport (None: no scoring);
    ``tokenizer``: the tokenize endpoint it has; ``stream_usage``: a streamed reply ends with its
    usage; ``template``: where a chat template for scoring comes from (``props``: the server's
    ``/props``; ``gguf``: the file its model id names; ``server``: the server renders it)."""

    name: str
    title: str
    grammar_field: str | None = None
    response_format: ResponseFormat = "json_schema"
    tool_calls: ToolCalls = "native"
    top_logprobs: int = 20
    scoring: ScoringTransport | None = None
    tokenizer: Tokenizer | None = None
    stream_usage: bool = True
    choice_field: bool = False
    template: Literal["props", "gguf", "server"] | None = None
    token_prompts: bool = False  # takes a prompt as token ids


PROFILES: dict[str, ServerProfile] = {profile.name: profile for profile in (
    ServerProfile("llama-cpp-python", "llama-cpp-python's server (python -m llama_cpp.server)",
                  grammar_field="grammar", response_format="json_object", tool_calls="grammar",
                  scoring="next-token", tokenizer="llama-cpp-python", stream_usage=False, template="gguf"),
    ServerProfile("llama-server", "llama.cpp's llama-server", grammar_field="grammar", tool_calls="grammar",
                  scoring="next-token", tokenizer="llama-server", template="props", token_prompts=True),
    ServerProfile("vllm", "vLLM", grammar_field="structured_outputs.grammar", choice_field=True,
                  scoring="prompt-logprobs", tokenizer="vllm",
                  template="server", token_prompts=True),
    ServerProfile("sglang", "SGLang", grammar_field="ebnf", scoring="echo", token_prompts=True),
    ServerProfile("ollama", "Ollama"),
    ServerProfile("openai", "OpenAI, or a server that says nothing of itself (the plain OpenAI API)"),
)}


def profile_named(name: object) -> ServerProfile:
    """The profile ``name`` (the ``profile`` model option), or an error naming the known ones."""
    if isinstance(name, str) and name in PROFILES:
        return PROFILES[name]
    close = difflib.get_close_matches(str(name), list(PROFILES), n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    raise DefinitionError(f"unknown server profile {name!r}{hint}; the profiles: {', '.join(PROFILES)}")


def check_choice(name: str, value: object, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise DefinitionError(f"{name} must be one of {', '.join(allowed)}, not {value!r}")


TRANSPORTS: tuple[str, ...] = get_args(ScoringTransport)
