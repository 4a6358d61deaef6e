"""Structured output in a flow: ``CallLLM(schema=...)`` asks for a reply in a JSON schema, reads
it into a value, and asks again when it does not fit.

Backends hold the reply to the schema where they can (a grammar on the embedded model, the
server's ``response_format``), so a reply that does not fit is rare; it is then sent back to the
model with what is wrong, ``retries`` times, before the run ends with
:class:`~statebound.errors.StructuredOutputError`. A server that answers outside the schema every
time is named as one that may ignore ``response_format``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import msgspec

from statebound.errors import StructuredOutputError, UnsupportedFeature
from statebound.flow.context import RunContext
from statebound.llm.base import LLM, Completion, Message, Request
from statebound.llm.json_schema import (
    GRAMMAR_SCHEMAS,
    SchemaMismatch,
    SchemaTarget,
    json_schema,
    read_reply,
    say_validated_only,
)

__all__ = ["StructuredReply", "ask_structured", "check_schema_support"]


@dataclass(frozen=True, slots=True)
class StructuredReply:
    """The reply that fit (``completion``), the value read from it, and how many calls it took."""

    completion: Completion
    value: Any
    calls: int


def check_schema_support(target: SchemaTarget, llm: LLM, *, where: str) -> Mapping[str, Any]:
    """The JSON schema of ``target``, once ``llm`` is known to hold replies to it (else refused);
    the keywords its grammar cannot enforce, which are only validated, are said once."""
    schema = json_schema(target)
    capabilities = llm.capabilities
    if not capabilities.schema:
        raise UnsupportedFeature(f"{where} asks for a reply in a JSON schema, and {llm.model} cannot hold a "
                                 "reply to one: use the embedded model, or a server with response_format")
    if GRAMMAR_SCHEMAS in capabilities.extras:
        say_validated_only(schema, backend=f"{where} on {llm.model}")
    return schema


async def ask_structured(ctx: RunContext, request: Request, target: SchemaTarget, *, llm: LLM | None,
                         retries: int) -> StructuredReply:
    """Ask for a reply fitting ``target`` (a JSON schema or a pydantic type), read it, and on a
    misfit ask again with what was wrong, up to ``retries`` more times."""
    request = msgspec.structs.replace(request, schema=json_schema(target))
    asked = request
    for attempt in range(retries + 1):
        completion = await ctx.complete(asked, llm=llm, stream=True)
        try:
            return StructuredReply(completion, read_reply(target, completion.text), attempt + 1)
        except SchemaMismatch as mismatch:
            problem = str(mismatch)
            asked = msgspec.structs.replace(request, messages=(*(request.messages or ()), Message("assistant", completion.text),
                                               Message("user", f"That reply cannot be used: {problem}. Reply "
                                                               "again with JSON that fits the schema, nothing else.")))
    model = ctx.llm_for(llm).model
    hint = (f"; {model} may ignore response_format (set --model-option response_format=json_object "
            "for llama-cpp-python's server, or grammar)" if model.startswith("openai:") else "")
    misfit = StructuredOutputError(f"state {ctx.state!r}: {problem} ({retries + 1} replies, none fit){hint}")
    misfit.completion = completion
    raise misfit
