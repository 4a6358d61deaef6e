import pytest

from statebound.bench.evaluate import run_task
from statebound.bench.registry import load_benchmark
from statebound.errors import DefinitionError
from statebound.llm.base import Capabilities
from statebound.llm.testing import FunctionLLM, ScriptedLLM

CAPS = Capabilities(completion=True, chat=True, logprobs=True, grammar=True)


def test_registered_benchmarks_and_sizes():
    gsm = load_benchmark("gsm8k").benchmark
    hotpot = load_benchmark("hotpotqa")
    dev = load_benchmark("hotpotqa", {"split": "dev"}).benchmark
    assert (len(gsm.tasks()), len(hotpot.benchmark.tasks()), len(dev.tasks())) == (1319, 100, 7405)
    assert {"react", "rewoo", "reflexion", "pass", "pass-no-summary", "cot->pass"} <= set(hotpot.agents)
    assert hotpot.benchmark.tasks()[0].meta == {"type": "bridge", "level": "hard"}


def test_options_are_checked():
    with pytest.raises(DefinitionError, match="gsm8k has no option 'shot'; did you mean 'shots'"):
        load_benchmark("gsm8k", {"shot": 3})
    with pytest.raises(DefinitionError, match="k='five': input should be a valid integer"):
        load_benchmark("gsm8k", {"k": "five"})
    with pytest.raises(DefinitionError, match="split='train'"):
        load_benchmark("hotpotqa", {"split": "train"})


async def test_hotpot_episode_reports_em_f1_and_monitor_counts():
    bench = load_benchmark("hotpotqa", {"limit": "1", "k": "1", "max_calls": 6})
    task = bench.benchmark.tasks()[0]  # gold: Gesellschaft mit beschränkter Haftung

    llm = ScriptedLLM(
        [
            "Thought] Search it.\n[Action] Search\n[Action Input] VIVA Media\n[Observation]",
            "Answer] too early",  # [Answer] may not follow an observation: cut, [Thought] forced
            " Look it up.\n[Action] Lookup\n[Action Input] GmbH\n[Observation]",
            "Final Thought] GmbH.\n[Answer] Gesellschaft mit beschränkter\n",
        ],
        capabilities=CAPS,
    )
    result = await run_task(bench, "react", task.id, llm=llm)
    assert result.success is False and result.reward == 0.0
    # F1 by hand: prediction [gesellschaft, mit, beschränkter] vs gold (+ haftung): P=1, R=3/4 -> 6/7
    assert result.meta["f1"] == pytest.approx(6 / 7)
    assert result.meta["em"] == 0.0
    assert result.meta["violations"] == 1 and result.meta["corrections"] == 1
    assert result.meta["answer"] == "Gesellschaft mit beschränkter"
    assert result.llm_calls == len(llm.requests) and result.prompt_tokens > 0
    assert any(e["role"] == "tool" for e in result.trajectory)


async def test_gsm8k_episode_graded_by_number(continue_with):
    bench = load_benchmark("gsm8k", {"limit": 2, "k": 3})
    task = bench.benchmark.tasks()[0]  # Janet's ducks: 18
    text = "[Thought] 16 - 3 - 4 = 9 eggs, 9 * 2 = 18.\n[Answer] $18\n"
    llm = FunctionLLM(lambda r: continue_with(r.prompt, text), capabilities=CAPS)
    result = await run_task(bench, "cot", task.id, llm=llm, seed=1)
    assert result.success and result.meta["em"] == 1.0 and result.meta["votes"] == 3
    assert result.meta["answer"] == "$18" and result.meta["violations"] == 0
    assert result.llm_calls == 3


async def test_dev_split_refuses_tool_agents(continue_with):
    bench = load_benchmark("hotpotqa", {"split": "dev", "limit": 1})
    first = bench.benchmark.tasks()[0].id
    llm = FunctionLLM(lambda r: continue_with(r.prompt, "[Answer] yes\n"), capabilities=CAPS)
    with pytest.raises(DefinitionError, match="split=dev has no tools.*'cot->react' needs tools"):
        await run_task(bench, "cot->react", first, llm=llm)
    result = await run_task(bench, "direct", first, llm=llm)
    assert result.success and result.meta["answer"] == "yes"  # the first dev question's gold is "yes"
    assert result.meta["violations"] == 0
