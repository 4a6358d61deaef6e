"""``format=grammar`` on the Bash agents: the grammar goes with every constrained call and never
with ``format=free``; a backend without grammars is refused before any sandbox starts."""

from __future__ import annotations

import asyncio

import pytest
from bash_doubles import FakeBashEnv, needs_sandbox

from statebound.agents.bash import build_plan_solve, build_react, build_stateflow
from statebound.agents.response_format import code_block_grammar, thought_action_grammar
from statebound.bench.evaluate import run_task
from statebound.bench.registry import load_benchmark
from statebound.contract.benchmark import EpisodeLimits
from statebound.errors import DefinitionError, UnsupportedFeature
from statebound.llm.base import Capabilities
from statebound.llm.testing import ScriptedLLM

GRAMMAR_LLM = Capabilities(completion=True, chat=True, grammar=True)
EMPTY = "Thought: copy\nAction: execute[cp /testbed/a /testbed/b]"
CHECK = "Thought: check\nAction: execute[ls /testbed]"


def grammars(flow, replies, results):
    llm = ScriptedLLM(replies, capabilities=GRAMMAR_LLM)
    flow.run_sync("Copy /testbed/a to /testbed/b", llm=llm, deps=FakeBashEnv(results))
    return [request.grammar for request in llm.requests]


@pytest.mark.parametrize("view", ["stateflow", "sf-agent"])
def test_stateflow_constrains_every_state(view):
    flow = build_stateflow(view=view, response_format="grammar")
    replies, results = [EMPTY, CHECK, "Thought: done\nAction: submit"], [("", True), ("a\nb", True)]
    used = grammars(flow, replies, results)  # Solve, then Verify twice
    assert used == [thought_action_grammar()] * 3
    assert grammars(build_stateflow(view=view), replies, results) == [None] * 3


def test_react_constrains_its_numbered_replies():
    replies = [" copy\nAction 1: execute[cp /testbed/a /testbed/b]", " done\nAction 2: submit"]
    used = grammars(build_react(response_format="grammar"), replies, [("", True)])
    assert used == [thought_action_grammar(numbered=True)] * 2


def test_plan_and_solve_keeps_its_plan_free():
    replies = ["1. Copy the file.", "```bash\ncp /testbed/a /testbed/b\n```"]
    used = grammars(build_plan_solve(response_format="grammar"), replies, [("", True)])
    assert used == [None, code_block_grammar("bash")]


def test_grammar_on_a_backend_without_grammars_is_refused():
    benchmark = load_benchmark("intercode-bash", {"format": "grammar"})
    with pytest.raises(UnsupportedFeature, match="intercode-bash agent react needs a model whose backend accepts GBNF grammars"):
        asyncio.run(run_task(benchmark, "react", "1-0", llm=ScriptedLLM([])))


@pytest.mark.parametrize(("options", "message"), [
    ({"format": "regex"}, "format='regex': input should be 'free' or 'grammar'"),
    ({"reply_tokens": "0"}, "reply_tokens='0': input should be greater than or equal to 1"),
])  # fmt: skip
def test_bad_options_are_clear_errors(options, message):
    with pytest.raises(DefinitionError, match=message):
        load_benchmark("intercode-bash", options)


@pytest.mark.integration
@needs_sandbox
def test_benchmark_passes_format_and_reply_tokens_to_its_flows():
    benchmark = load_benchmark("intercode-bash", {"format": "grammar", "reply_tokens": "48"})
    llm = ScriptedLLM(["Thought: look\nAction: execute[ls /]"] * 2, capabilities=GRAMMAR_LLM)
    asyncio.run(run_task(benchmark, "stateflow", "4-0", llm=llm, limits=EpisodeLimits(max_turns=2)))
    assert [(r.grammar, r.max_tokens) for r in llm.requests] == [(thought_action_grammar(), 48)] * len(llm.requests)
    assert llm.requests
