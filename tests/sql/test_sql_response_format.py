"""``format=grammar`` on the SQL agents: the grammar goes with every constrained call, never with
``format=free``; a backend without grammars is refused; one real-model episode."""

from __future__ import annotations

import asyncio

import pytest

from statebound.agents.response_format import code_block_grammar, thought_action_grammar
from statebound.bench.evaluate import run_task
from statebound.bench.registry import LoadedBenchmark, load_benchmark
from statebound.contract.benchmark import EpisodeLimits
from statebound.envs.sql.sqlite_backend import SqliteBackend
from statebound.errors import DefinitionError, UnsupportedFeature
from statebound.llm.base import LLM, Capabilities
from statebound.llm.model_files import llama_cpp_missing
from statebound.llm.testing import ScriptedLLM

GRAMMAR_LLM = Capabilities(completion=True, chat=True, grammar=True)
DESC = "Thought: look\nAction: execute[DESC people]"
SUBMIT = "Thought: done\nAction: submit"


def bench(backend: SqliteBackend, **options: object) -> LoadedBenchmark:
    return load_benchmark("intercode-sql", {"cache_dir": str(backend.directory.parent.parent), **options})


def episode(benchmark: LoadedBenchmark, agent: str, llm: LLM, max_turns: int = 10):
    task = benchmark.benchmark.tasks()[0]
    return asyncio.run(run_task(benchmark, agent, task.id, llm=llm, limits=EpisodeLimits(max_turns=max_turns)))


@pytest.mark.parametrize(
    ("agent", "replies", "grammar"),
    [
        ("stateflow", [DESC, DESC, SUBMIT], thought_action_grammar()),
        ("sf-agent", [DESC, SUBMIT], thought_action_grammar()),
        ("react", [" look\nAction 1: execute[SHOW TABLES]", " done\nAction 2: submit"],
         thought_action_grammar(numbered=True)),
    ],
)
def test_grammar_goes_with_every_call_when_enabled(agent, replies, grammar, sqlite_backend):
    llm = ScriptedLLM(replies, capabilities=GRAMMAR_LLM)
    result = episode(bench(sqlite_backend, format="grammar"), agent, llm)
    assert result.exit_state == "End" and result.llm_calls == len(replies)
    assert [r.grammar for r in llm.requests] == [grammar] * len(replies)


def test_plan_and_solve_keeps_its_plan_free(sqlite_backend):
    replies = ["Plan:\n1. Check the tables.", "```SQL\nSHOW TABLES\n```"]
    llm = ScriptedLLM(replies, capabilities=GRAMMAR_LLM)
    result = episode(bench(sqlite_backend, format="grammar"), "plan-solve", llm)
    assert result.meta["executed"] == 1
    assert [r.grammar for r in llm.requests] == [None, code_block_grammar("SQL")]


def test_free_format_sends_no_grammar_and_reply_tokens_set_max_tokens(sqlite_backend):
    llm = ScriptedLLM([DESC, SUBMIT], capabilities=GRAMMAR_LLM)
    episode(bench(sqlite_backend, reply_tokens="64"), "sf-agent", llm)
    assert [(r.grammar, r.max_tokens) for r in llm.requests] == [(None, 64), (None, 64)]


def test_grammar_on_a_backend_without_grammars_is_refused(sqlite_backend):
    benchmark = bench(sqlite_backend, format="grammar")
    with pytest.raises(UnsupportedFeature, match="intercode-sql agent stateflow needs a model whose backend accepts GBNF grammars.*-O format=free"):
        episode(benchmark, "stateflow", ScriptedLLM([SUBMIT]))
    assert episode(benchmark, "gold", ScriptedLLM([])).success  # oracles call no model


@pytest.mark.parametrize(("options", "message"), [
    ({"format": "json"}, "format='json': input should be 'free' or 'grammar'"),
    ({"reply_tokens": "0"}, "reply_tokens='0': input should be greater than or equal to 1"),
    ({"reply_tokens": "many"}, "reply_tokens='many': input should be a valid integer"),
])  # fmt: skip
def test_bad_options_are_clear_errors(options, message):
    with pytest.raises(DefinitionError, match=message):
        load_benchmark("intercode-sql", options)


@pytest.mark.integration
@pytest.mark.skipif(bool(llama_cpp_missing()), reason=llama_cpp_missing() or "")
def test_smollm2_constrained_episode_acts(sqlite_backend):
    """The embedded model under the grammar: every reply is a parsable action."""
    from statebound.llm.registry import open_model

    # the records' reply budget: a reply cut off by max_tokens leaves its execute[...] unclosed (the
    # model copies the long SELECT examples since Init's step is shown as thought and action)
    benchmark = bench(sqlite_backend, format="grammar", reply_tokens=256)
    task = next(t for t in benchmark.benchmark.tasks() if t.meta["hardness"] == "easy")
    result = asyncio.run(run_task(benchmark, "stateflow", task.id, llm=open_model("smollm2"),
                                  limits=EpisodeLimits(max_turns=3)))
    assert result.error is None and result.llm_calls >= 1
    # Init runs SHOW TABLES itself; every reply after it was a valid action
    assert result.meta["invalid_actions"] == 0 and result.turns == 1 + result.llm_calls
    assert result.meta["executed"] > 1  # at least one command the model wrote ran
