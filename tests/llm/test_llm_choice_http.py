"""Pick over HTTP, against llama-cpp-python's real OpenAI-compatible server (the ``llama_server``
fixture): a choice grammar and lettered options work there (scoring: test_server_scoring.py)."""

from __future__ import annotations

import pytest

from statebound.flow import ExitReason, Flow, Instruction, Pick, State, always
from statebound.llm.model_files import llama_cpp_missing
from statebound.llm.registry import open_model

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(llama_cpp_missing() is not None, reason="llama-cpp-python is not installed"),
]


def asking(pick: Pick, question: str) -> Flow:
    return Flow(name="ask", initial="Ask", states=[
        State("Ask", outputs=[Instruction(question), pick], transitions=[(always(), "End")]),
        State("End", final=True)])


async def test_over_http_a_choice_grammar_picks_on_llama_cpp_pythons_server(llama_server: str) -> None:
    llm = open_model("openai:smollm2", base_url=llama_server, attempts=1, grammar_field="grammar")
    pick = Pick(lambda ctx: ["Paris", "Berlin", "Madrid"], method="grammar")
    result = await asking(pick, "What is the capital of France? Answer with the city only.").run("x", llm=llm)
    assert result.exit_reason is ExitReason.FINAL
    assert result.history[-1].content in ("Paris", "Berlin", "Madrid")
    assert result.history[-1].data["choice"]["method"] == "grammar"


async def test_over_http_lettered_options_score_as_on_the_embedded_model(llama_server: str) -> None:
    """``auto`` takes ``label`` on a server that reports top log-probabilities and cannot score
    (here: told not to), and the letters' scores there are the embedded model's."""
    question = "What is the capital of France? Answer with the city only."
    remote = open_model("openai:smollm2", base_url=llama_server, attempts=1, scoring=False)
    over_http = await asking(Pick(lambda ctx: ["Paris", "Berlin", "Madrid"]), question).run("x", llm=remote)
    embedded = await asking(Pick(lambda ctx: ["Paris", "Berlin", "Madrid"], method="label"),
                            question).run("x", llm=open_model("smollm2"))
    theirs, ours = over_http.history[-1].data["choice"], embedded.history[-1].data["choice"]
    assert (theirs["method"], theirs["asked"]) == ("label", "auto")
    assert theirs["picked"] == ours["picked"]
    assert theirs["scores"] == pytest.approx(ours["scores"], abs=0.05)
    assert sum(score is not None for score in theirs["scores"]) >= 2  # the letters were among the top tokens
