"""Against a real vLLM server (CPU build, SmolLM2 in float32; the ``vllm_server`` fixture): the
profile is detected, ``score`` reads prompt_logprobs of token ids (every candidate in one request)
and agrees with the embedded Q4 model within quantisation, a choice grammar goes as vLLM's own
``structured_outputs.choice``, and the scoped SQL machine runs over it with ``choice=auto``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Literal

import pytest
from pydantic import BaseModel

from statebound.flow import ExitReason, Flow, Instruction, Pick, State, always
from statebound.llm.base import Message, Request, chat, complete_sync
from statebound.llm.registry import open_model
from statebound.llm.streaming import streaming_to

pytestmark = pytest.mark.integration

ASK = (Message("system", "You write SQL."),
       Message("user", "Table singer has columns: name, age\nQuestion: How many singers are there?\nWhich table?"))
TABLES = ("singer", "concert", "stadium", "singer_in_concert")


def test_vllm_is_detected_with_what_it_can_do(vllm_server: str) -> None:
    llm = open_model("openai:smollm2", base_url=vllm_server)
    setup = llm.setup  # type: ignore[attr-defined]
    assert setup.profile.name == "vllm" and "GET /version answered" in setup.detection.how
    assert setup.scoring == "prompt-logprobs" and llm.capabilities.chat_scoring and llm.capabilities.grammar


@pytest.mark.parametrize("request_", [Request(messages=ASK, score=TABLES),
                                      Request(prompt="The capital of France is", score=(" Paris", " Berlin"))],
                         ids=["chat", "text"])
def test_scores_agree_with_the_embedded_model_within_quantisation(vllm_server: str, request_: Request) -> None:
    theirs = complete_sync(open_model("openai:smollm2", base_url=vllm_server), request_)
    ours = complete_sync(open_model("smollm2"), request_)
    for mine, embedded in zip(theirs.choices, ours.choices):
        assert [t.token for t in mine.logprobs or ()] == [t.token for t in embedded.logprobs or ()]
        assert [t.logprob for t in mine.logprobs or ()] == pytest.approx([t.logprob for t in embedded.logprobs or ()],
                                                                         abs=0.35)  # float32 against Q4_1
    assert theirs.usage.prompt_tokens == ours.usage.prompt_tokens


def asking(pick: Pick) -> Flow:
    return Flow(name="ask", initial="Ask", states=[
        State("Ask", outputs=[Instruction("Which is the capital of France?"), pick], transitions=[(always(), "End")]),
        State("End", final=True)])


@pytest.mark.parametrize("method", ["auto", "label", "grammar"])
async def test_every_chooser_picks_over_vllm(vllm_server: str, method: str) -> None:
    llm = open_model("openai:smollm2", base_url=vllm_server)
    result = await asking(Pick(lambda ctx: ["Paris", "Berlin", "Madrid"], method=method)).run(  # type: ignore[arg-type]
        "x", llm=llm)
    choice = result.history[-1].data["choice"]
    assert result.exit_reason is ExitReason.FINAL, result.error
    assert choice["method"] == ("score" if method == "auto" else method)
    assert result.history[-1].content in ("Paris", "Berlin", "Madrid")


def test_a_choice_grammar_holds_the_reply_through_structured_outputs(vllm_server: str) -> None:
    llm = open_model("openai:smollm2", base_url=vllm_server)
    for request in (chat(("user", "Say something."), grammar='root ::= "alpha" | "beta"', max_tokens=6),
                    Request(prompt="Say something:", grammar='root ::= " alpha" | " beta"', max_tokens=6)):
        assert complete_sync(llm, request).text.strip() in ("alpha", "beta")


class Route(BaseModel):
    team: Literal["billing", "tech"]
    urgent: bool


def test_a_schema_and_a_stream_with_usage(vllm_server: str) -> None:
    llm = open_model("openai:smollm2", base_url=vllm_server)
    reply = complete_sync(llm, chat(("user", "Route: my invoice is wrong."), schema=Route.model_json_schema(),
                                    max_tokens=40))
    assert Route.model_validate_json(reply.text)
    pieces: list[str] = []
    plain = complete_sync(llm, chat(("user", "Say hello."), max_tokens=8))
    with streaming_to(pieces.append):
        streamed = complete_sync(llm, chat(("user", "Say hello."), max_tokens=8))
    assert "".join(pieces) == streamed.text == plain.text and streamed.usage == plain.usage


def test_the_scoped_sql_machine_runs_over_vllm(vllm_server: str, tmp_path: object) -> None:
    done = subprocess.run(
        [str(Path(sys.executable).with_name("statebound")), "eval", "intercode-sql", "-a", "stateflow-scoped", "-m", "openai:smollm2",
         "--model-option", f"base_url={vllm_server}", "--model-option", "price=free", "--tasks", "3,123",
         "--max-turns", "10", "-j", "1", "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "2 episodes run, 0 already stored, 0 crashed" in done.stdout + done.stderr
