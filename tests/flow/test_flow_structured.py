"""CallLLM(schema=...): a reply in a JSON schema, read into a value, asked again when it does not
fit; refused before the run on a model that cannot hold it. The real model: at the end."""

from __future__ import annotations

import dataclasses
import logging
import os
from typing import Literal

import pytest
from pydantic import BaseModel, Field

from statebound import CallLLM, Flow, Instruction, State, always
from statebound.errors import DefinitionError, StructuredOutputError, UnsupportedFeature
from statebound.flow import ExitReason
from statebound.llm.base import Capabilities, Request
from statebound.llm.json_schema import (
    GRAMMAR_SCHEMAS,
    SchemaMismatch,
    enforceable,
    read_reply,
    unenforced,
)
from statebound.llm.model_files import llama_cpp_missing
from statebound.llm.testing import ScriptedLLM

SCHEMA_CAPABLE = Capabilities(chat=True, schema=True)


class Route(BaseModel):
    team: Literal["billing", "tech", "sales"]
    urgent: bool


@dataclasses.dataclass(frozen=True)
class Ticket:
    route: Route | None = None


def routing(call: CallLLM, *, vars: object = None) -> Flow:  # noqa: A002 - the Flow argument's name
    return Flow(name="route", initial="Read", vars=vars, states=[
        State("Read", outputs=[Instruction("Route: 'I was charged twice.'"), call], transitions=[(always(), "End")]),
        State("End", final=True)])


def test_the_reply_is_read_into_the_type_and_written_into_a_variable() -> None:
    llm = ScriptedLLM(['{"team": "billing", "urgent": false}'], capabilities=SCHEMA_CAPABLE)
    result = routing(CallLLM(schema=Route, into="route"), vars=Ticket).run_sync("t", llm=llm)
    assert result.exit_reason is ExitReason.FINAL
    assert result.history[-1].data == {"structured": {"team": "billing", "urgent": False}}
    assert result.vars == Ticket(route=Route(team="billing", urgent=False))
    assert llm.requests[0].schema == Route.model_json_schema()


def test_a_reply_that_does_not_fit_is_sent_back_with_what_is_wrong() -> None:
    llm = ScriptedLLM(['{"team": "legal", "urgent": false}', '{"team": "tech", "urgent": true}'],
                      capabilities=SCHEMA_CAPABLE)
    result = routing(CallLLM(schema=Route)).run_sync("t", llm=llm)
    assert result.history[-1].data == {"structured": {"team": "tech", "urgent": True}}
    retry = llm.requests[1].messages or ()
    assert retry[-2].content == '{"team": "legal", "urgent": false}'
    assert "team: Input should be 'billing', 'tech' or 'sales'" in retry[-1].content
    assert result.usage.calls == 2


def test_after_every_retry_the_run_ends_with_a_named_error_and_keeps_the_last_reply() -> None:
    llm = ScriptedLLM(["not json", "still not"], capabilities=SCHEMA_CAPABLE, model="openai:local")
    result = routing(CallLLM(schema=Route, retries=1)).run_sync("t", llm=llm)
    assert result.exit_reason is ExitReason.ERROR
    assert isinstance(result.error, StructuredOutputError)
    assert "state 'Read'" in str(result.error) and "2 replies, none fit" in str(result.error)
    assert "may ignore response_format" in str(result.error)
    assert result.history[-1].content == "still not"


def test_a_dict_schema_is_checked_with_jsonschema() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}, "required": ["n"]}
    assert read_reply(schema, '{"n": 3}') == {"n": 3}
    with pytest.raises(SchemaMismatch, match="at n: 0 is less than the minimum of 1"):
        read_reply(schema, '{"n": 0}')
    with pytest.raises(SchemaMismatch, match="not JSON"):
        read_reply(schema, "three")


def test_a_schema_that_is_not_one_is_refused_when_the_flow_is_built() -> None:
    with pytest.raises(DefinitionError, match="not a valid JSON schema at properties/n"):
        CallLLM(schema={"type": "object", "properties": {"n": {"type": "integr"}}})
    with pytest.raises(DefinitionError, match="neither a JSON schema dict nor a type"):
        CallLLM(schema=object())
    with pytest.raises(DefinitionError, match="a grammar= or a schema="):
        CallLLM(schema=Route, grammar='root ::= "x"')
    with pytest.raises(DefinitionError, match="give it a schema= too"):
        CallLLM(into="route")


def test_a_model_that_cannot_hold_a_schema_is_refused_before_the_run() -> None:
    llm = ScriptedLLM(['{"team": "tech", "urgent": true}'])  # no schema capability
    with pytest.raises(UnsupportedFeature, match="state 'Read' asks for a reply in a JSON schema"):
        routing(CallLLM(schema=Route)).run_sync("t", llm=llm)
    assert llm.requests == []


class Graded(BaseModel):
    team: Literal["billing", "tech"]
    priority: int = Field(ge=1, le=3)


def test_a_keyword_a_grammar_cannot_enforce_is_only_validated_and_said_once(caplog: pytest.LogCaptureFixture) -> None:
    schema = Graded.model_json_schema()
    assert unenforced(schema) == ["maximum at properties/priority", "minimum at properties/priority"]
    kept = enforceable(schema)["properties"]["priority"]
    assert "maximum" not in kept and "minimum" not in kept and kept["type"] == "integer"  # the grammar's part
    grammar_backed = Capabilities(chat=True, schema=True, extras=frozenset({GRAMMAR_SCHEMAS}))
    llm = ScriptedLLM(['{"team": "tech", "priority": 7}', '{"team": "tech", "priority": 2}',
                       '{"team": "billing", "priority": 1}'], capabilities=grammar_backed)
    with caplog.at_level(logging.WARNING, logger="statebound.llm.schemas"):
        first = routing(CallLLM(schema=Graded)).run_sync("t", llm=llm)
        again = routing(CallLLM(schema=Graded)).run_sync("t", llm=llm)
    assert first.exit_reason is ExitReason.FINAL and first.usage.calls == 2  # 7 broke the maximum: sent back
    assert first.history[-1].data["structured"] == {"team": "tech", "priority": 2}
    assert again.exit_reason is ExitReason.FINAL
    said = [r.getMessage() for r in caplog.records if "only validated" in r.getMessage()]
    assert len(said) == 1 and "cannot enforce maximum at properties/priority; minimum at" in said[0]


def test_a_request_takes_a_grammar_or_a_schema() -> None:
    with pytest.raises(ValueError, match="not both"):
        Request(prompt="x", grammar='root ::= "a"', schema={"type": "string"})


@pytest.mark.integration
@pytest.mark.skipif(llama_cpp_missing() is not None, reason="llama-cpp-python is not installed")
def test_the_embedded_model_replies_in_the_schema() -> None:
    from statebound import open_model

    os.environ.setdefault("STATEBOUND_THREADS", "1")
    result = routing(CallLLM(schema=Route, max_tokens=40, into="route"), vars=Ticket).run_sync(
        "t", llm=open_model("smollm2"))
    assert result.exit_reason is ExitReason.FINAL and result.usage.calls == 1
    assert isinstance(result.vars.route, Route)
    assert Route.model_validate_json(result.history[-1].content) == result.vars.route
