"""The scoped GSM8K machine: the quantities it reads, the steps it offers, its transition table
state by state with a scorer double making the picks, the random control, the registry, the
chance yardstick of its choices script, and the embedded model making the picks."""

from __future__ import annotations

import importlib.util
import os
from fractions import Fraction
from pathlib import Path

import pytest

from statebound.agents.qa.catalog import GSM8K_AGENTS
from statebound.agents.qa.quantities import format_quantity, parse_quantity, quantities, steps
from statebound.agents.qa.scoped import ScopedQAAgent
from statebound.agents.qa.scoped_arithmetic import build_scoped_arithmetic
from statebound.benchmarks.qa import Gsm8kOptions
from statebound.contract.benchmark import Setup, Task
from statebound.envs.qa.datasets import QAItem
from statebound.envs.qa.env import QAEnvironment
from statebound.flow import ExitReason, picks
from statebound.llm.model_files import llama_cpp_missing
from statebound.llm.registry import open_model
from statebound.llm.testing import ScriptedLLM

PENCILS = "Tom has 3 boxes of 12 pencils each. He gives away 5 pencils. How many pencils does he have left?"
CLIPS = ("Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May. "
         "How many clips did Natalia sell altogether in April and May?")


def liking(*texts: str) -> ScriptedLLM:
    """A scorer double: the candidates among ``texts`` score highest, any other -8; the baseline
    prompt (problem "N/A") scores all alike, so calibration keeps the order."""
    liked = {text for text in texts}

    def scorer(prompt: str, text: str) -> list[float]:
        value = -4.0 if "Problem: N/A" in prompt else -1.0 if text.strip() in liked else -8.0
        return [value] * max(1, len(text.split()))

    return ScriptedLLM(scorer=scorer)


def env_for(question: str, answer: str) -> QAEnvironment:
    env = QAEnvironment(items=[QAItem(id="q", question=question, answer=answer)], tools=("Calculator",), kind="number")
    env.reset("q")
    return env


def states(result) -> list[str]:
    assert result.exit_state == "End" and result.exit_reason is ExitReason.FINAL
    return [entry.state for entry in result.history if entry.source == "tool"]


# -- reading and steps ----------------------------------------------------------------------------
@pytest.mark.parametrize(("problem", "values"), [
    ("A $1,200 bike at 20% off costs 3.5 times less.", ["1200", "0.2", "3.5"]),
    ("She buys twice as many, half a dozen and three more.", ["2", "0.5", "12", "3"]),
    ("No numbers here.", []),
])
def test_the_quantities_a_problem_states(problem: str, values: list[str]) -> None:
    assert [format_quantity(value) for value in quantities(problem)] == values


def test_quantities_are_written_as_a_person_writes_them_and_read_back() -> None:
    for text in ("24", "0.5", "12.25", "0.05"):
        assert format_quantity(parse_quantity(text)) == text


def test_steps_use_two_quantities_and_keep_short_non_negative_results() -> None:
    offered = steps((Fraction(3), Fraction(12), Fraction(5)))
    texts = [step.text for step in offered]
    assert "3 * 12 = 36" in texts and "12 - 5 = 7" in texts and "12 / 3 = 4" in texts
    assert "3 - 12 = -9" not in texts and "5 / 3 = 1.6666666667" not in texts  # negative, not a short decimal
    assert next(s for s in offered if s.text == "3 * 12 = 36").pool == (Fraction(5), Fraction(36))
    twos = [step.text for step in steps((Fraction(2), Fraction(2)))]
    assert twos == ["2 + 2 = 4", "2 - 2 = 0", "2 / 2 = 1"]  # 2 * 2 leaves the pool 2 + 2 leaves: offered once


# -- the transition table, state by state ---------------------------------------------------------
def test_each_step_is_picked_then_computed_until_one_quantity_is_left() -> None:
    env = env_for(PENCILS, "31")
    result = build_scoped_arithmetic().run_sync(PENCILS, llm=liking("3 * 12 = 36", "36 - 5 = 31"), deps=env)
    assert states(result) == ["Read", "Compute", "Compute", "Finish"]
    first, second = picks(result.history, "step")
    assert first.text == "3 * 12 = 36" and second.text == "36 - 5 = 31"
    assert len(second.candidates) < len(first.candidates)  # the pool shrank by one
    computed = [entry for entry in result.history if entry.state == "Compute" and entry.source == "tool"]
    assert [entry.content for entry in computed] == ["3 * 12 = 36", "36 - 5 = 31"]  # the Calculator's results
    assert computed[-1].data == {"pool": ["31"]}
    assert env.answer == "31" and env.score().success and env.actions == 3  # two calculations and Finish


def test_a_step_leaving_the_gold_out_of_reach_is_scored_as_a_failure() -> None:
    env = env_for(CLIPS, "72")  # 48 + 48 / 2: 48 is needed twice, which the machine cannot do
    result = build_scoped_arithmetic().run_sync(CLIPS, llm=liking("48 * 0.5 = 24"), deps=env)
    assert states(result) == ["Read", "Compute", "Finish"]
    assert env.answer == "24" and not env.score().success


@pytest.mark.parametrize(("problem", "answer"), [("How many legs have 4 cats?", "4"), ("How many legs?", "")])
def test_with_fewer_than_two_quantities_there_is_nothing_to_pick(problem: str, answer: str) -> None:
    env = env_for(problem, "16")
    result = build_scoped_arithmetic().run_sync(problem, llm=ScriptedLLM(), deps=env)
    assert states(result) == ["Read", "Finish"] and env.answer == answer
    assert result.usage.prompt_tokens == 0  # no model call


# -- the control, the registry and the choices script ---------------------------------------------
def test_the_random_control_needs_no_model_and_repeats() -> None:
    answers = []
    for _ in range(2):
        env = env_for(PENCILS, "31")
        result = build_scoped_arithmetic(chooser="random").run_sync(PENCILS, llm=ScriptedLLM(), deps=env)
        assert result.usage.prompt_tokens == 0 and all(p.method == "random" for p in picks(result.history))
        answers.append(env.answer)
    assert answers[0] == answers[1] and answers[0]


def test_the_agents_are_registered_for_gsm8k() -> None:
    setup = Setup(options=Gsm8kOptions(), task=Task("gsm8k-0000", PENCILS), seed=0, max_turns=None)
    agent = GSM8K_AGENTS["stateflow-scoped"].build(setup)
    assert isinstance(agent, ScopedQAAgent) and agent.flow.name == "stateflow-scoped"
    assert GSM8K_AGENTS["stateflow-scoped-random"].build(setup).flow.name == "stateflow-scoped-random"


def _choices_script():
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "gsm8k_scoped_choices.py"
    spec = importlib.util.spec_from_file_location("gsm8k_scoped_choices", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_chance_is_the_share_of_random_step_sequences_that_end_at_the_gold() -> None:
    chance = _choices_script().chance
    two = (Fraction(2), Fraction(3))  # 2 + 3, 2 * 3, 3 - 2, 3 / 2 (2 - 3 is negative, 2 / 3 not short)
    assert chance(two, Fraction(6)) == pytest.approx(1 / 4) and chance(two, Fraction(7)) == 0
    pool = tuple(sorted((Fraction(3), Fraction(12), Fraction(5))))
    first = steps(pool)
    by_hand = sum(sum(s.result == 31 for s in steps(step.pool)) / len(steps(step.pool)) for step in first) / len(first)
    assert chance(pool, Fraction(31)) == pytest.approx(by_hand) and 0 < by_hand < 0.1


@pytest.mark.integration
@pytest.mark.skipif(llama_cpp_missing() is not None, reason="llama-cpp-python is not installed")
def test_the_embedded_model_makes_the_picks() -> None:
    os.environ.setdefault("STATEBOUND_THREADS", "1")
    env = env_for(PENCILS, "31")
    result = build_scoped_arithmetic().run_sync(PENCILS, llm=open_model("smollm2"), deps=env)
    made = picks(result.history, "step")
    assert result.exit_reason is ExitReason.FINAL and len(made) == 2 and all(p.method == "score" for p in made)
    assert all(p.scores is not None and len(p.scores) == len(p.candidates) for p in made)
    assert env.answer is not None and Fraction(env.answer) >= 0 and result.usage.completion_tokens == 0
