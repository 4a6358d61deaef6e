"""``score`` over llama-cpp-python's real server (the ``llama_server`` fixture) gives the embedded
model's numbers: the profile is detected, chat messages are rendered by the GGUF's own template
here, each token is read as a forced next token; and its echo, which fails the self-check, is
refused by name."""

from __future__ import annotations

import pytest

from statebound.errors import UnsupportedFeature
from statebound.flow import ExitReason, Flow, Instruction, Pick, State, always
from statebound.llm.base import Message, Request, complete_sync
from statebound.llm.model_files import llama_cpp_missing
from statebound.llm.registry import open_model

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(llama_cpp_missing() is not None, reason="llama-cpp-python is not installed"),
]

TABLES = ("singer", "concert", "stadium", "singer_in_concert")
ASK = (Message("system", "You write SQL."),
       Message("user", "Table singer has columns: name, age\nQuestion: How many singers are there?\nWhich table?"))
REQUESTS = [
    Request(messages=ASK, score=TABLES),
    Request(messages=(*ASK, Message("assistant", "SELECT count(*) FROM")), score=(" singer", " concert")),
    Request(prompt="The capital of France is", score=(" Paris", " Berlin", " the city of Rome")),
    Request(prompt="$ ls -la |", score=(" grep txt", " wc -l")),
]


def values(request: Request, llm: object) -> list[list[tuple[str, float]]]:
    completion = complete_sync(llm, request)  # type: ignore[arg-type]
    return [[(t.token, t.logprob) for t in choice.logprobs or ()] for choice in completion.choices]


def test_the_server_is_detected_and_scores_text_and_chat(llama_server: str) -> None:
    llm = open_model("openai:smollm2", base_url=llama_server)
    assert llm.setup.profile.name == "llama-cpp-python"  # type: ignore[attr-defined]
    assert llm.capabilities.scoring and llm.capabilities.chat_scoring and llm.capabilities.grammar
    rows = {name: used for name, used, _ in llm.setup.report()}  # type: ignore[attr-defined]
    assert rows["chat template for scoring"].startswith("the GGUF file ")


@pytest.mark.parametrize("request_", REQUESTS, ids=["chat", "continued", "text", "text-pipe"])
def test_scores_over_the_server_are_the_embedded_models(llama_server: str, request_: Request) -> None:
    remote = open_model("openai:smollm2", base_url=llama_server)
    local = open_model("smollm2")
    theirs, ours = values(request_, remote), values(request_, local)
    assert [[token for token, _ in text] for text in theirs] == [[token for token, _ in text] for text in ours]
    assert [[value for _, value in text] for text in theirs] == [
        pytest.approx([value for _, value in text], abs=1e-4) for text in ours]


def asking(pick: Pick) -> Flow:
    return Flow(name="ask", initial="Ask", states=[
        State("Ask", outputs=[Instruction("Which table lists the singers? Answer with its name."), pick],
              transitions=[(always(), "End")]),
        State("End", final=True)])


@pytest.mark.parametrize("baseline", [None, lambda ctx: [Message("user", "Which table? Answer with its name.")]],
                         ids=["plain", "calibrated"])
async def test_auto_picks_by_score_over_the_server_as_embedded(llama_server: str, baseline: object) -> None:
    pick = Pick(lambda ctx: list(TABLES), baseline=baseline)  # type: ignore[arg-type]
    remote = await asking(pick).run("x", llm=open_model("openai:smollm2", base_url=llama_server))
    local = await asking(pick).run("x", llm=open_model("smollm2"))
    assert remote.exit_reason is ExitReason.FINAL, remote.error
    theirs, ours = remote.history[-1].data["choice"], local.history[-1].data["choice"]
    assert (theirs["method"], theirs["asked"]) == ("score", "auto")
    assert theirs["picked"] == ours["picked"] and theirs["scores"] == pytest.approx(ours["scores"], abs=1e-4)


def test_llama_cpp_pythons_echo_fails_the_self_check_and_is_refused(llama_server: str) -> None:
    """0.3.16 pairs each echoed token with the next position's row when the prompt does not start
    with BOS: the self-check finds it, and ``scoring=echo`` is refused naming the server."""
    llm = open_model("openai:smollm2", base_url=llama_server, scoring="echo", attempts=1)
    with pytest.raises(UnsupportedFeature, match=r"llama-cpp-python profile\) cannot score text by echo: the self-check"):
        complete_sync(llm, Request(prompt="The capital of France is", score=" Paris"))
