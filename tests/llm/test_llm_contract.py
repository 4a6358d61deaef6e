"""One suite every model backend passes: the scripted double, the function model, the embedded model
and the OpenAI-compatible backend against a real llama.cpp server (the suite the `transitions`
library runs against each of its variants, applied to the LLM protocol).

A backend names its model, says what it can do, and for a request returns one choice per sample with
honest usage (one call, the prompt counted, no more completion tokens than asked for), never a stop
sequence in the text, and a prompt continued only when it can continue text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from statebound.errors import UnsupportedFeature
from statebound.llm.base import LLM, Capabilities, Completion, Request, chat
from statebound.llm.model_files import llama_cpp_missing
from statebound.llm.registry import open_model
from statebound.llm.testing import FunctionLLM, ScriptedLLM

REPLY = "Paris is the capital of France.\nIt is large."
needs_llama = pytest.mark.skipif(llama_cpp_missing() is not None, reason="llama-cpp-python is not installed")


@pytest.fixture(params=[
    "scripted", "function",
    pytest.param("embedded", marks=[pytest.mark.integration, needs_llama]),
    pytest.param("openai-compatible", marks=[pytest.mark.integration, needs_llama]),
])  # fmt: skip
def backend(request: pytest.FixtureRequest) -> Iterator[LLM]:
    if request.param == "scripted":
        yield ScriptedLLM([REPLY] * 20)
    elif request.param == "function":
        yield FunctionLLM(lambda r: REPLY)
    elif request.param == "embedded":
        yield open_model("smollm2")
    else:
        yield open_model("openai:smollm2", base_url=request.getfixturevalue("llama_server"), attempts=1)


async def _complete(llm: LLM, request: Request) -> Completion:
    return await llm.complete(request)


def test_a_backend_names_its_model_and_capabilities(backend: LLM) -> None:
    assert isinstance(backend, LLM)
    assert isinstance(backend.model, str) and backend.model
    assert isinstance(backend.capabilities, Capabilities) and backend.capabilities.chat


async def test_a_chat_request_gets_one_choice_with_honest_usage(backend: LLM) -> None:
    completion = await _complete(backend, chat(("user", "What is the capital of France?"), max_tokens=12))
    assert len(completion.choices) == 1 and isinstance(completion.text, str)
    assert completion.usage.calls == 1 and completion.usage.prompt_tokens > 0
    assert 0 <= completion.usage.completion_tokens <= 12
    assert completion.finish_reason in ("stop", "length")


async def test_max_tokens_bounds_the_reply(backend: LLM) -> None:
    completion = await _complete(backend, chat(("user", "Tell me about Paris in detail."), max_tokens=2))
    assert completion.usage.completion_tokens <= 2 and completion.finish_reason == "length"


async def test_a_stop_sequence_never_appears_in_the_text(backend: LLM) -> None:
    completion = await _complete(backend, chat(("user", "Write two lines about Paris."), max_tokens=24,
                                               stop=("\n",)))
    assert "\n" not in completion.text


async def test_n_samples_give_n_choices(backend: LLM) -> None:
    completion = await _complete(backend, chat(("user", "Name a city."), max_tokens=4, n=2,
                                               temperature=0.8, seed=3))
    assert len(completion.choices) == 2 and all(isinstance(c.text, str) for c in completion.choices)


async def test_a_plain_prompt_is_continued_only_by_backends_that_can(backend: LLM) -> None:
    request = Request(prompt="The capital of France is", max_tokens=4)
    if backend.capabilities.completion:
        completion = await _complete(backend, request)
        assert completion.usage.prompt_tokens > 0 and completion.usage.completion_tokens <= 4
    else:
        with pytest.raises(UnsupportedFeature):
            await _complete(backend, request)


async def test_a_grammar_holds_the_reply_where_the_backend_takes_grammars(backend: LLM) -> None:
    if not backend.capabilities.grammar:
        pytest.skip(f"{backend.model} takes no grammar (the harness refuses agents that need one)")
    completion = await _complete(backend, chat(("user", "Is Paris in France?"), max_tokens=4,
                                               grammar='root ::= "yes" | "no"'))
    assert re.fullmatch(r"yes|no", completion.text.strip())
