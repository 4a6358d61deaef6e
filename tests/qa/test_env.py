import pytest

from statebound.envs.base import Environment
from statebound.envs.qa import QAEnvironment, QAItem, grade_answer, load_gsm8k, load_hotpotqa
from statebound.envs.qa.corpus import Corpus
from statebound.errors import DefinitionError

ITEMS = [QAItem(id="q1", question="Who?", answer="Richard Nixon"), QAItem(id="q2", question="Sum?", answer="18")]


def test_environment_protocol_and_tools():
    corpus = Corpus.from_mapping({"Milhouse": ["Milhouse was named after Richard Nixon."]})
    env = QAEnvironment(items=ITEMS, tools=("Search", "Lookup"), corpus=corpus)
    assert isinstance(env, Environment)
    assert env.reset("q1") == "Who?"
    assert env.step("Search[Milhouse]").observation == "Milhouse was named after Richard Nixon."
    assert env.call("Lookup", "Nixon").observation.startswith("(Result 1 / 1)")
    bad = env.step("Calculator[1+1]")
    assert not bad.ok and "Search, Lookup, Finish" in bad.observation
    assert not env.step("gibberish").ok
    done = env.step("Finish[richard nixon]")
    assert done.done
    score = env.score()
    assert score.success and score.metrics == {"em": 1.0, "f1": 1.0}
    assert (env.actions, env.failed_actions) == (5, 2)


def test_calculator_errors_are_failed_actions():
    env = QAEnvironment(items=ITEMS, tools=("Calculator",), kind="number")
    env.reset("q2")
    assert env.call("calculator", "9*2").observation == "18"
    assert not env.call("Calculator", "x*2").ok
    env.submit("So she makes $18.")
    assert env.score().success


def test_search_without_corpus_is_a_definition_error():
    with pytest.raises(DefinitionError, match="corpus"):
        QAEnvironment(items=ITEMS, tools=("Search",))
    env = QAEnvironment(items=ITEMS, tools=("Calculator",))
    with pytest.raises(DefinitionError, match="unknown task id"):
        env.reset("nope")


def test_grade_answer():
    assert grade_answer(None, "x", kind="text").reward == 0.0
    partial = grade_answer("Richard Nixon Jr", "Richard Nixon", kind="text")
    assert partial.reward == 0.0 and partial.metrics["f1"] == pytest.approx(0.8)
    assert grade_answer("The answer is 1,000.", "1000", kind="number").success


def test_datasets_sizes_and_gold():
    gsm = load_gsm8k()
    assert len(gsm) == 1319 and gsm[0].answer == "18" and gsm[0].id == "gsm8k-0000"
    assert len(load_hotpotqa("distractor")) == 100
    dev = load_hotpotqa("dev")
    assert len(dev) == 7405 and dev[0].answer == "yes"
    with pytest.raises(DefinitionError):
        load_hotpotqa("train")  # type: ignore[arg-type]


CORPUS = {
    "Milhouse": ["Milhouse is a character.", "Milhouse was named after Richard Nixon."],
    "Richard Nixon": ["Richard Nixon was a president.", "Nixon was born in Yorba Linda."],
}


async def test_a_parallel_step_runs_every_call_from_the_state_before_it():
    env = QAEnvironment(items=ITEMS, tools=("Search", "Lookup", "Calculator"), corpus=Corpus.from_mapping(CORPUS))
    env.reset("q1")
    env.call("Search", "Milhouse")
    results = await env.call_parallel([("Search", "Richard Nixon"), ("Lookup", "named"), ("Calculator", "2*3"),
                                       ("Search", "Nobody Here")])
    assert results[0].observation.startswith("Richard Nixon was a president.")
    assert results[1].observation == "(Result 1 / 1) Milhouse was named after Richard Nixon."  # the page before
    assert results[2].observation == "6" and "Could not find Nobody Here" in results[3].observation
    # afterwards the page is the one the last state-changing call found: the failed search changed nothing
    assert env.call("Lookup", "born").observation == "(Result 1 / 1) Nixon was born in Yorba Linda."
    assert (env.actions, env.failed_actions) == (6, 0)


async def test_parallel_calls_run_at_the_same_time(monkeypatch):
    """Each call runs in a worker thread of its own: slow tools overlap."""
    import threading
    import time

    import statebound.envs.qa.env as env_module

    inside, most = 0, 0
    lock = threading.Lock()

    def slow_calculate(expression: str) -> str:
        nonlocal inside, most
        with lock:
            inside += 1
            most = max(most, inside)
        time.sleep(0.2)
        with lock:
            inside -= 1
        return expression

    monkeypatch.setattr(env_module, "calculate", slow_calculate)
    env = QAEnvironment(items=ITEMS, tools=("Calculator",), kind="number")
    env.reset("q2")
    results = await env.call_parallel([("Calculator", str(n)) for n in range(3)])
    assert [r.observation for r in results] == ["0", "1", "2"] and most == 3
