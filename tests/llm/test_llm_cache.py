"""The persistent response cache: what is replayed, what is not, and that replays keep usage."""

from __future__ import annotations

import sqlite3

import pytest

from statebound.llm.base import (
    Capabilities,
    Choice,
    Message,
    Request,
    TokenLogprob,
    ToolCall,
    ToolSpec,
    chat,
)
from statebound.llm.cache import CachedLLM, request_key
from statebound.llm.registry import open_model
from statebound.llm.testing import FunctionLLM


def counting_llm(model: str = "function") -> FunctionLLM:
    """Each reply says how many requests came before it, so a fresh call never equals a replay."""
    llm = FunctionLLM(lambda r: f"reply {len(llm.requests)}", model=model)
    return llm


async def test_greedy_requests_are_replayed_with_their_usage(tmp_path):
    inner = counting_llm()
    cached = CachedLLM(inner, tmp_path / "cache.sqlite")
    request = chat(("user", "What is 2 + 2?"), max_tokens=8)
    first = await cached.complete(request)
    second = await cached.complete(request)
    assert second == first and first.text == "reply 1"
    assert len(inner.requests) == 1 and (cached.hits, cached.misses) == (1, 1)
    assert second.usage.prompt_tokens == 5 and second.usage.calls == 1  # charged as a real call


async def test_any_field_of_the_request_is_part_of_the_key(tmp_path):
    inner = counting_llm()
    cached = CachedLLM(inner, tmp_path / "cache.sqlite")
    base = chat(("user", "Q"), max_tokens=8)
    variants = [base, chat(("user", "Q"), max_tokens=9), chat(("user", "Q"), max_tokens=8, stop=("\n",)),
                chat(("system", "Q"), max_tokens=8), Request(prompt="Q", max_tokens=8),
                chat(("user", "Q"), max_tokens=8, grammar='root ::= "a"')]
    texts = [(await cached.complete(v)).text for v in variants]
    assert texts == [f"reply {i}" for i in range(1, 7)]
    assert cached.hits == 0


async def test_sampling_without_a_seed_is_never_cached(tmp_path):
    inner = counting_llm()
    cached = CachedLLM(inner, tmp_path / "cache.sqlite")
    sampled = chat(("user", "Q"), temperature=0.7)
    assert (await cached.complete(sampled)).text != (await cached.complete(sampled)).text
    seeded = chat(("user", "Q"), temperature=0.7, seed=3)
    assert (await cached.complete(seeded)).text == (await cached.complete(seeded)).text
    assert len(inner.requests) == 3


async def test_the_store_persists_and_is_per_model(tmp_path):
    path = tmp_path / "cache.sqlite"
    request = chat(("user", "Q"))
    first = CachedLLM(counting_llm(), path)
    stored = await first.complete(request)
    await first.aclose()
    again = CachedLLM(counting_llm(), path)  # a new process would see the same file
    assert await again.complete(request) == stored and again.hits == 1
    other = CachedLLM(counting_llm(model="another"), path)
    assert (await other.complete(request)).model == "another" and other.hits == 0
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM completions").fetchone() == (2,)


async def test_logprobs_and_finish_reasons_survive_a_replay(tmp_path):
    reply = Choice("yes", finish_reason="length", logprobs=(TokenLogprob("yes", -0.25),))
    cached = CachedLLM(FunctionLLM(lambda r: reply), tmp_path / "cache.sqlite")
    request = Request(prompt="Is it?", logprobs=True, max_tokens=1)
    await cached.complete(request)
    replay = await CachedLLM(FunctionLLM(lambda r: "other"), tmp_path / "cache.sqlite").complete(request)
    assert replay.choices == (reply,)


def test_key_is_stable_and_open_model_wraps(tmp_path):
    request = chat(("user", "Q"), seed=1)
    assert request_key("m", request) == request_key("m", chat(("user", "Q"), seed=1))
    assert request_key("m", request) != request_key("n", request)
    model = open_model("scripted", replies=["a"], cache=str(tmp_path / "c.sqlite"))
    assert isinstance(model, CachedLLM) and model.model == "scripted"
    assert model.capabilities == Capabilities(completion=True, chat=True, logprobs=True)


# keys computed by the version whose requests were dataclasses (commit 8f0293c): stores written
# then are still read, whatever the requests are built as now
STORED_KEYS = {
    "chat": "501b8dea3ff2671217310da1db14ee42490b91b126dd6b38f88ccedc10eae8a9",
    "prompt": "7b6aaa5641ee49597d25961140267c79fa3380e9f089df2e5a6c7fc8c9364c1c",
    "tools": "2dbe447471b0881f3c0e62b070febd6096194788a0be44194e1c981ee00ef6f3",
    "schema": "f793ff6e5ab19a10d095c0317ebaf686168535deae41c1a480838f355275f13e",
}


def test_keys_are_those_earlier_versions_stored():
    requests = {
        "chat": Request(messages=(Message("system", "You are terse."), Message("user", "Hi"),
                                  Message("assistant", "Hello", tool_calls=(ToolCall("c1", "look", '{"q": "x"}'),)),
                                  Message("tool", "found", tool_call_id="c1")), stop=("\n",), max_tokens=8),
        "prompt": Request(prompt="Q: 2+2?\nA:", max_tokens=4, seed=7, temperature=0.5, score=("4", "5")),
        "tools": Request(messages=(Message("user", "weather?"),), tool_choice="required", tools=(ToolSpec(
            "weather", "the weather", {"type": "object", "properties": {"city": {"type": "string"}}}),)),
        "schema": Request(messages=(Message("user", "json"),),
                          schema={"type": "object", "properties": {"a": {"type": "integer"}}}),
    }
    assert {name: request_key("LlamaCpp|smollm2", request) for name, request in requests.items()} == STORED_KEYS


async def test_a_hybrid_replays_the_calls_of_the_agents_it_combines(tmp_path, monkeypatch):
    """``cot->react`` after ``cot`` and ``react``: every call of the hybrid is a replay."""
    from statebound.bench.evaluate import run_task
    from statebound.bench.registry import load_benchmark

    bench = load_benchmark("hotpotqa", {"limit": 1, "max_calls": 6})
    task = bench.benchmark.tasks()[0].id
    answers = iter(range(1000))  # every sample answers differently: the hybrid must fall back

    def respond(request: Request) -> str:
        return f"Thought] guess.\n[Answer] answer {next(answers)}\n"

    caps = Capabilities(completion=True, chat=True, logprobs=True, grammar=True)
    inner = FunctionLLM(respond, capabilities=caps)
    cached = CachedLLM(inner, tmp_path / "cache.sqlite")
    cot = await run_task(bench, "cot", task, llm=cached)
    react = await run_task(bench, "react", task, llm=cached)
    calls_before = len(inner.requests)
    both = await run_task(bench, "cot->react", task, llm=cached)
    assert len(inner.requests) == calls_before, "the hybrid made a call the agents had not made"
    assert both.meta["fell_back"] is True and both.meta["answer"] == react.meta["answer"]
    assert both.prompt_tokens == cot.prompt_tokens + react.prompt_tokens
    assert cached.hits == both.llm_calls > 0


@pytest.mark.parametrize("temperature,seed,cached", [(0.0, None, True), (0.7, None, False), (0.7, 5, True)])
def test_which_requests_are_deterministic(temperature, seed, cached):
    from statebound.llm.cache import is_deterministic

    assert is_deterministic(chat(("user", "Q"), temperature=temperature, seed=seed)) is cached


def _open_and_read(path: str, barrier) -> str | None:
    """One worker's first use of a shared store; returns the error it met, if any."""
    cached = CachedLLM(FunctionLLM(lambda r: "x"), path)
    barrier.wait()
    try:
        cached._get("some key")
    except sqlite3.OperationalError as error:
        return str(error)
    return None


def test_workers_opening_a_new_store_at_once_do_not_fail(tmp_path):
    """Two processes (as two Ray workers) opening the same new store together: SQLite refuses one
    of them the switch to WAL at once in about half of such races, which used to crash an episode."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    with context.Manager() as manager, context.Pool(2) as pool:
        for trial in range(12):
            barrier = manager.Barrier(2)
            path = str(tmp_path / f"cache-{trial}.sqlite")
            errors = pool.starmap(_open_and_read, [(path, barrier), (path, barrier)])
            assert errors == [None, None], f"trial {trial}: {errors}"
