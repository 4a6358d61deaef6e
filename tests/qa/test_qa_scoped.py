"""The scoped HotpotQA machine: what it reads from questions and pages, its transition table
state by state on the real distractor corpus (a scorer double makes the picks), the random
control, the CLI, and the embedded model making the picks."""

from __future__ import annotations

import os

import pytest

from statebound.agents.qa.catalog import HOTPOTQA_AGENTS
from statebound.agents.qa.scoped import ScopedQAAgent, build_scoped
from statebound.agents.qa.scoped_reading import (
    alternatives,
    answer_kind,
    answer_spans,
    named_things,
    spans_of_kind,
)
from statebound.benchmarks.qa import HotpotOptions
from statebound.contract.benchmark import Setup, Task
from statebound.envs.qa.corpus import Corpus, hotpot_distractor_corpus
from statebound.envs.qa.datasets import QAItem, load_hotpotqa
from statebound.envs.qa.env import QAEnvironment
from statebound.errors import DefinitionError
from statebound.flow import ExitReason, picks
from statebound.llm.model_files import llama_cpp_missing
from statebound.llm.registry import open_model
from statebound.llm.testing import ScriptedLLM

YES_NO = "5adf5daf5542995534e8c79d"  # Are Darren Benjamin Shepherd and Rémi Lange both American? no
EITHER = "5a7f7b3b5542992097ad2f81"  # ... further north, Pizza Inn or Papa Gino's? Papa Gino's
BRIDGE = "5a81e107554299676cceb12a"  # Ed Oxenbould plays Tyler in a film directed by which famous director?


def liking(*texts: str) -> ScriptedLLM:
    """A scorer double: the candidates among ``texts`` score highest, earlier ones higher, any
    other -8; the baseline prompt (question "N/A") scores all alike, so calibration keeps the order."""
    rank = {text.lower(): i for i, text in enumerate(texts)}

    def scorer(prompt: str, text: str) -> list[float]:
        liked = rank.get(text.strip().lower())
        value = -4.0 if "Question: N/A" in prompt else -8.0 if liked is None else -1.0 - 0.1 * liked
        return [value] * max(1, len(text.split()))

    return ScriptedLLM(scorer=scorer)


@pytest.fixture(scope="module")
def env() -> QAEnvironment:
    return QAEnvironment(items=load_hotpotqa(), corpus=hotpot_distractor_corpus())


def states(result) -> list[str]:
    """The states the run went through, in order, ending in End."""
    assert result.exit_state == "End"
    return list(dict.fromkeys(entry.state for entry in result.history))


# -- reading ------------------------------------------------------------------------------------
@pytest.mark.parametrize(("question", "names"), [
    ("VIVA Media AG changed it's name in 2004. What does their new acronym stand for?", ["VIVA Media AG"]),
    ("Which of Jonny Craig and Pete Doherty has been a member of more bands ?", ["Jonny Craig", "Pete Doherty"]),
    ('This expansion of the 2008 magazine article "Is Google Making Us Stoopid?" was a finalist for what award?',
     ["Is Google Making Us Stoopid?"]),
    ("Who is the lead vocalist for Maroon 5's sixth studio album?", ["Maroon 5"]),
    ("The Rome Protocols were signed by three Prime Ministers", ["Rome Protocols", "Prime Ministers"]),
])
def test_the_things_a_question_names(question: str, names: list[str]) -> None:
    assert named_things(question) == names


@pytest.mark.parametrize(("question", "kind"), [
    ("Are Darren Benjamin Shepherd and Rémi Lange both American?", "yesno"),
    ("In what year was the singer who popularized it born?", "year"),
    ("When was the Argentine former footballer born?", "date"),
    ("What is the birthday of this Anglo-Irish actress?", "date"),
    ("How many members does the band have?", "number"),
    ("Which FC Barcelona signee was a contender when he played for the Timberwolves?", "name"),
])
def test_the_kind_of_answer_a_question_wants(question: str, kind: str) -> None:
    assert answer_kind(question) == kind


@pytest.mark.parametrize(("question", "pair"), [
    ("Which restaurant chain's headquarters is further north, Pizza Inn or Papa Gino's?", ("Pizza Inn", "Papa Gino's")),
    ('Which movie was filmed first "The Guest" or "You\'re Next"?', ("The Guest", "You're Next")),
    ("Which of Jonny Craig and Pete Doherty has been a member of more bands ?", ("Jonny Craig", "Pete Doherty")),
    ("What team was led to victory in 1939 by a player nicknamed Scat?", None),
])
def test_the_two_things_a_question_chooses_between(question: str, pair: tuple[str, str] | None) -> None:
    assert alternatives(question) == pair


def test_answer_spans_and_their_kinds() -> None:
    text = ("Sam Boyd Stadium is in Whitney, Nevada. It opened on 4 October 1971 with 32,000 seats, "
            "and the UNLV Rebels have played there since 1971.")
    spans = answer_spans(text)
    assert {"Sam Boyd Stadium", "Whitney, Nevada", "4 October 1971", "32,000", "UNLV Rebels", "1971"} <= set(spans)
    assert spans_of_kind(spans, "year") == ["1971"]
    assert spans_of_kind(spans, "date") == ["4 October 1971", "1971"]
    assert "32,000" not in spans_of_kind(spans, "name") and "Sam Boyd Stadium" in spans_of_kind(spans, "name")


# -- the transition table, state by state ---------------------------------------------------------
def test_a_yes_no_question_goes_read_yesno_finish(env: QAEnvironment) -> None:
    question = env.reset(YES_NO)
    result = build_scoped().run_sync(question, llm=liking("no"), deps=env)
    assert states(result) == ["Read", "YesNo", "Finish"] and result.exit_reason is ExitReason.FINAL
    choice = picks(result.history)[0]
    assert (choice.name, choice.candidates, choice.text) == ("yesno", ("yes", "no"), "no")
    assert env.answer == "no" and env.score().success


def test_a_choice_between_two_named_things_offers_just_those(env: QAEnvironment) -> None:
    question = env.reset(EITHER)
    result = build_scoped().run_sync(question, llm=liking("Papa Gino's"), deps=env)
    assert states(result) == ["Read", "Either", "Finish"]
    choice = picks(result.history)[0]
    assert choice.candidates == ("Pizza Inn", "Papa Gino's") and env.score().success
    read = result.history[1].data
    assert {"Pizza Inn", "Papa Gino's"} <= {title for title, _ in read["pages"]}  # both pages in the prompt


def test_a_bridge_question_reads_a_linked_page_then_picks_a_span(env: QAEnvironment) -> None:
    question = env.reset(BRIDGE)
    llm = liking("The Visit (2015 American film)", "M. Night Shyamalan")
    result = build_scoped().run_sync(question, llm=llm, deps=env)
    assert states(result) == ["Read", "Links", "Page", "Open", "Answer", "Finish"]
    page, answer = picks(result.history)
    assert page.text == "The Visit (2015 American film)" and 1 < len(page.candidates) <= 6
    assert "Ed Oxenbould" not in page.candidates  # a page already read is not offered again
    assert answer.text == "M. Night Shyamalan" and "Ed Oxenbould" not in answer.candidates  # the question's own
    assert env.score().success


KENT_BAER = "What stadium does the team who has Kent Baer as the defensive coordinator play its home games?"


def tiny_env(pages: dict[str, list[str]]) -> QAEnvironment:
    env = QAEnvironment(items=[QAItem(id="q", question=KENT_BAER, answer="Sam Boyd Stadium")],
                        corpus=Corpus.from_mapping(pages))
    env.reset("q")
    return env


def test_links_are_the_names_on_a_page_that_are_pages() -> None:
    env = tiny_env({
        "Kent Baer": ["Kent Baer is the defensive coordinator of the UNLV Rebels."],
        "UNLV Rebels": ["The UNLV Rebels play their home games at Sam Boyd Stadium in Whitney, Nevada."],
    })
    result = build_scoped().run_sync(KENT_BAER, llm=liking("Sam Boyd Stadium", "UNLV Rebels"), deps=env)
    links = next(entry.data["links"] for entry in result.history if entry.state == "Links" and entry.source == "tool")
    page = picks(result.history, "page")[0]
    assert links == ["UNLV Rebels"] and page.candidates == ("UNLV Rebels",)  # one candidate: taken, no model call
    assert env.score().success


def test_with_no_page_left_to_read_links_go_straight_to_answer() -> None:
    env = tiny_env({"Kent Baer": ["Kent Baer coaches the UNLV Rebels, who play at Sam Boyd Stadium."]})
    result = build_scoped().run_sync(KENT_BAER, llm=liking("Sam Boyd Stadium"), deps=env)
    assert states(result) == ["Read", "Links", "Answer", "Finish"] and env.score().success


def test_with_nothing_found_the_answer_is_empty_and_the_run_still_ends() -> None:
    env = tiny_env({"Zebra": ["Zebras are striped."]})  # no page, link or span the question can use
    result = build_scoped().run_sync(KENT_BAER, llm=ScriptedLLM(), deps=env)
    assert states(result) == ["Read", "Links", "Answer", "Finish"]
    assert picks(result.history, "answer")[0].index is None and env.answer == ""
    assert not env.score().success and result.usage.prompt_tokens == 0  # nothing to pick: no model call


def test_searches_refused_at_the_action_limit_read_as_nothing_found() -> None:
    env = QAEnvironment(items=load_hotpotqa(), corpus=hotpot_distractor_corpus(), max_actions=2)
    question = env.reset(BRIDGE)
    result = build_scoped().run_sync(question, llm=liking("M. Night Shyamalan"), deps=env)
    read = result.history[1].data
    assert [title for title, _ in read["pages"]] == ["Ed Oxenbould"]  # the question, then its one name
    links = next(entry.data["links"] for entry in result.history if entry.state == "Links" and entry.source == "tool")
    opened = next(entry for entry in result.history if entry.state == "Open" and entry.source == "tool")
    assert links == [] and opened.data == {"pages": [], "opened": ""} and not opened.ok  # refused, not a page
    assert states(result)[-1] == "Finish" and env.answer is not None  # Finish is never refused


# -- the control, the registry and the CLI --------------------------------------------------------
def test_the_random_control_needs_no_model_and_repeats(env: QAEnvironment) -> None:
    answers = []
    for _ in range(2):
        question = env.reset(BRIDGE)
        result = build_scoped(chooser="random").run_sync(question, llm=ScriptedLLM(), deps=env)
        assert result.usage.prompt_tokens == 0 and all(p.method == "random" for p in picks(result.history))
        answers.append(env.answer)
    assert answers[0] == answers[1] and answers[0]


def test_the_agents_are_registered_and_need_pages() -> None:
    setup = Setup(options=HotpotOptions(), task=Task(BRIDGE, "q"), seed=0, max_turns=None)
    assert isinstance(HOTPOTQA_AGENTS["stateflow-scoped"].build(setup), ScopedQAAgent)
    assert HOTPOTQA_AGENTS["stateflow-scoped-random"].build(setup).flow.name == "stateflow-scoped-random"
    check = HOTPOTQA_AGENTS["stateflow-scoped"].check
    assert check is not None
    with pytest.raises(DefinitionError, match="reads pages"):
        check(HotpotOptions(split="dev"))


@pytest.mark.integration
@pytest.mark.skipif(llama_cpp_missing() is not None, reason="llama-cpp-python is not installed")
def test_the_embedded_model_makes_the_picks(env: QAEnvironment) -> None:
    os.environ.setdefault("STATEBOUND_THREADS", "1")
    question = env.reset(EITHER)
    result = build_scoped().run_sync(question, llm=open_model("smollm2"), deps=env)
    choice = picks(result.history)[0]
    assert result.exit_reason is ExitReason.FINAL and choice.method == "score"
    assert choice.scores is not None and len(choice.scores) == 2 and env.answer in choice.candidates
    assert 0 < result.usage.prompt_tokens < 4000 and result.usage.completion_tokens == 0


def test_the_rules_declare_every_variable_they_read(env: QAEnvironment, monkeypatch) -> None:
    from traced_reads import tracing_reads

    trace = tracing_reads(monkeypatch)
    for item in load_hotpotqa()[:25]:
        build_scoped(chooser="random").run_sync(env.reset(item.id), llm=ScriptedLLM(), deps=env)
    assert {"pages", "links", "similar"} <= trace.read["pages to read"]
    assert trace.undeclared() == {}
