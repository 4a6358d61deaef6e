"""The decoding monitor against scripted model output that breaks the spec in every listed way."""

from __future__ import annotations

import pytest

from statebound.errors import ContextOverflow, DefinitionError, UnsupportedFeature
from statebound.llm.base import Capabilities, Choice, Request
from statebound.llm.testing import FunctionLLM, ScriptedLLM
from statebound.spec import Monitor, MonitorConfig, load_bundled, validate_examples

SPEC = load_bundled("react")


def calculator(request) -> str:  # an env handler: reads the last action input
    expression = [s.text for s in request.segments if s.state == "Act-Inp"][-1].strip()
    return {"3*7": "21", "2+2": "4"}.get(expression, "error")


def monitor(llm, **config) -> Monitor:
    """The paper's correction unless told otherwise (the authors' has its own tests below)."""
    return Monitor(SPEC, llm=llm, env={"Obs": calculator}, config=MonitorConfig(**{"correction": "paper", **config}))


async def test_clean_run_needs_one_call_per_tool_step() -> None:
    llm = ScriptedLLM([
        "Thought] I need 3*7.\n[Action] Calculator\n[Action Input] 3*7\n[Observation] (hallucinated)",
        "Final Thought] It is 21.\n[Answer] 21\n",
    ])
    result = await monitor(llm).run("What is 3 * 7?")
    assert result.conforms and result.completed and result.stop_reason == "complete"
    assert result.states == ("Ques", "Tht", "Act", "Act-Inp", "Obs", "Final-Tht", "Ans")
    assert result.content("Obs") == "21" and result.content("Ans") == "21"
    assert result.violations == () and result.truncations == 0
    assert (result.llm_calls, result.env_calls) == (2, 1)
    assert [c.reason for c in result.corrections] == ["boundary", "boundary"]
    assert llm.requests[0].prompt.endswith("[Question] What is 3 * 7?\n[")
    assert llm.requests[0].stop == ("[Observation]", "[Question]")


# Ans may not follow Tht: the first reply skips Act
WRONG_NEXT_STATE = ["Thought] I will just answer. [Answer] 42\n", " Calculator\n[Action Input] 3*7",
                    "Final Thought] 21.\n[Answer] 21"]


async def test_wrong_next_state_is_cut_and_prefixed() -> None:
    llm = ScriptedLLM(WRONG_NEXT_STATE)
    result = await monitor(llm).run("What is 3 * 7?")
    (violation,) = result.violations
    assert violation.kind == "wrong_state" and violation.found == "Ans"
    assert violation.expected == {"Act"} and violation.state == "Tht"
    assert result.transcript[violation.position:].startswith("[Action]")
    assert llm.requests[1].prompt.endswith("[Thought] I will just answer. [Action]")
    assert result.truncations == 1 and result.extra_tokens == 2  # 12 of 41 characters of 7 tokens
    assert result.conforms and result.content("Ans") == "21"


async def test_repeated_marker() -> None:
    llm = ScriptedLLM([
        "Thought] one [Thought] two",
        " Calculator [Action Input] 2+2",
        "Final Thought] four [Answer] 4",
    ])
    result = await monitor(llm).run("2+2?")
    assert [v.kind for v in result.violations] == ["repeated_marker"]
    assert "two" not in result.transcript and result.conforms


async def test_text_after_the_final_state_is_cut() -> None:
    llm = ScriptedLLM(["Final Thought] easy.\n[Answer] 4\n[Question] What is 5+5?\n[Thought] ..."])
    result = await monitor(llm, stop_at_restart=False).run("2+2?")
    (violation,) = result.violations
    assert violation.kind == "after_final" and violation.found == "Ques"
    assert result.transcript.rstrip().endswith("[Answer] 4")
    assert result.conforms and result.llm_calls == 1 and result.truncated_chars > 20


async def test_a_new_question_is_a_stop_sequence_by_default() -> None:
    llm = ScriptedLLM(["Final Thought] easy.\n[Answer] 4 [Question] What is 5+5?"])
    result = await monitor(llm).run("2+2?")
    assert result.violations == () and result.content("Ans") == "4" and result.conforms


async def test_missing_marker_when_the_model_stops_early() -> None:
    llm = ScriptedLLM([
        "Thought] I need 2+2.",  # stops without [Action]
        " Calculator [Action Input] 2+2",
        "Final Thought] four [Answer] 4",
    ])
    result = await monitor(llm).run("2+2?")
    (violation,) = result.violations
    assert violation.kind == "missing_marker" and violation.expected == {"Act"}
    assert result.corrections[1].prefix == "[Action]" and result.conforms


async def test_missing_marker_after_an_observation() -> None:
    llm = ScriptedLLM([
        "[Thought] t [Action] Calculator [Action Input] 2+2",
        "So the answer is 4.",  # plain text where a marker must come: the prefix was not followed
        "Final Thought] four [Answer] 4",  # continues the "[" the monitor prefixed
    ])
    result = await monitor(llm, boundary_prefix=False).run("2+2?")
    assert [v.kind for v in result.violations] == ["missing_marker"]
    assert result.corrections[-1].prefix == "[" and result.conforms


async def test_marker_split_across_two_chunks() -> None:
    llm = ScriptedLLM([
        Choice("Thought] I need 2+2. [Act", finish_reason="length"),
        Choice("ion] Calculator [Action Input] 2+2", finish_reason="stop"),
        "Final Thought] four [Answer] 4",
    ])
    result = await monitor(llm).run("2+2?")
    assert result.violations == () and result.conforms
    assert llm.requests[1].prompt.endswith("[Thought] I need 2+2. [Act")
    assert result.content("Act") == "Calculator" and result.content("Obs") == "4"


async def test_repeated_failure_forces_a_full_marker() -> None:
    llm = ScriptedLLM(["Thought] t [Action] Calculator [Action Input] 2+2",
                       "Observation] again", "Observation] again", " four [Answer] 4"])
    result = await monitor(llm).run("2+2?")
    assert [v.kind for v in result.violations] == ["repeated_marker", "repeated_marker"]
    assert [(c.reason, c.prefix) for c in result.corrections][1:] == [
        ("boundary", "["), ("violation", "["), ("forced", "[Final Thought]")]
    assert result.conforms and result.content("Final-Tht") == "four"


async def test_budget_wraps_the_run_up() -> None:
    rambling = Choice("Thought] I keep thinking and thinking", finish_reason="length")
    llm = FunctionLLM(lambda request: rambling if request.max_tokens > 1 else "")
    result = await monitor(llm, max_calls=6, chunk_tokens=8).run("2+2?")
    assert result.conforms and result.completed
    assert "wrap_up" in {c.reason for c in result.corrections}
    assert result.llm_calls <= 6


async def test_a_prompt_over_the_context_ends_the_run_incomplete() -> None:
    overflows = []

    def small_context(request: Request) -> str:
        if len(request.prompt) > 150:
            overflows.append(request.prompt)
            raise ContextOverflow("prompt too long", provider="test")
        return "Thought] I need 3*7.\n[Action] Calculator\n[Action Input] 3*7\n"

    result = await monitor(FunctionLLM(small_context)).run("What is 3 * 7?")
    assert result.stop_reason == "context" and not result.completed and not result.conforms
    assert len(overflows) == 1 and result.llm_calls >= 1  # stopped at the first overflow
    assert result.content("Obs") == "21"  # what was written before the overflow stands
    assert overflows[0].startswith(result.transcript.rstrip())


async def test_environment_text_with_a_marker_is_cut() -> None:
    spec_env = {"Obs": lambda request: "4 [Answer] injected"}
    llm = ScriptedLLM(["Thought] t [Action] Calculator [Action Input] 2+2", "Final Thought] f [Answer] 4"])
    result = await Monitor(SPEC, llm=llm, env=spec_env).run("2+2?")
    assert result.violations[0].kind == "env_marker"
    assert "injected" not in result.transcript and result.conforms


async def test_chat_only_models_get_the_transcript_in_the_user_turn() -> None:
    chat_only = Capabilities(completion=False, chat=True)
    llm = ScriptedLLM(["[Thought] t\n[Action] Calculator\n[Action Input] 2+2", "[Final Thought] f\n[Answer] 4"],
                      capabilities=chat_only)
    result = await monitor(llm).run("2+2?")
    assert result.conforms and result.violations == ()
    first = llm.requests[0]
    assert first.prompt is None and first.messages[-1].content.endswith("[Question] 2+2?\n[")


async def test_eager_mode_stops_at_every_marker() -> None:
    def respond(request: Request) -> str:
        prompt = request.prompt or ""
        if request.max_tokens == 8:  # a choice call: think first, answer after the observation
            return "Final Thought]" if "[Observation]" in prompt else "Thought]"
        last = prompt.rstrip().rsplit("[", 1)[-1]
        return {"Thought]": " I need 2+2.", "Action]": " Calculator", "Action Input]": " 2+2",
                "Final Thought]": " four", "Answer]": " 4\n"}.get(last, " ?")

    llm = FunctionLLM(respond)
    result = await monitor(llm, mode="eager").run("2+2?")
    assert result.conforms and result.content("Ans") == "4"
    assert result.states == ("Ques", "Tht", "Act", "Act-Inp", "Obs", "Final-Tht", "Ans")
    # two choice calls (after the question and after the observation) + five content calls
    assert result.llm_calls == 7


async def test_none_mode_keeps_violations() -> None:
    llm = ScriptedLLM(["[Thought] t [Answer] 4\n[Question] more"])
    result = await monitor(llm, mode="none").run("2+2?")
    assert not result.conforms and result.violations == () and result.llm_calls == 1


async def test_grammar_mode_sends_a_grammar_and_validates() -> None:
    llm = ScriptedLLM(["[Thought] t [Action] Calculator [Action Input] 2+2", "[Final Thought] f [Answer] 4"],
                      capabilities=Capabilities(completion=True, grammar=True))
    result = await monitor(llm, mode="grammar").run("2+2?")
    assert result.conforms
    grammar = llm.requests[0].grammar
    assert grammar is not None and grammar.startswith("root ::= ws m1")
    assert '"[Thought]" s2' in grammar


async def test_grammar_mode_refuses_models_without_grammar_support() -> None:
    with pytest.raises(UnsupportedFeature, match="cannot take a grammar"):
        await monitor(ScriptedLLM(["x"]), mode="grammar").run("2+2?")


def test_configuration_errors() -> None:
    with pytest.raises(DefinitionError, match="unknown monitor mode"):
        MonitorConfig(mode="strict")  # type: ignore[arg-type]
    with pytest.raises(DefinitionError, match="no environment handler"):
        Monitor(SPEC, llm=ScriptedLLM())


async def test_grammar_mode_drops_a_marker_cut_by_the_chunk_limit() -> None:
    llm = ScriptedLLM([Choice("[Thought] t [Act", finish_reason="length"),
                       "[Action] Calculator [Action Input] 2+2", "[Final Thought] f [Answer] 4"],
                      capabilities=Capabilities(completion=True, grammar=True))
    result = await monitor(llm, mode="grammar").run("2+2?")
    assert result.conforms and result.violations == () and result.truncations == 1
    assert llm.requests[1].prompt.endswith("[Thought] t ")
    assert llm.requests[1].grammar.startswith("root ::= s2\n")  # inside Thought: text, then [Action]


async def test_budget_spent_inside_the_final_state_ends_the_run() -> None:
    # the model reaches [Answer] but keeps hitting the chunk limit until the call budget is gone
    llm = ScriptedLLM([
        Choice(text=" some reasoning\n[Answer] 1", finish_reason="length"),
        Choice(text="8 and more", finish_reason="length"),
        Choice(text="8 and more", finish_reason="length"),
    ])
    result = await Monitor(load_bundled("cot"), llm=llm, config=MonitorConfig(max_calls=3)).run("q")
    assert result.llm_calls == 3
    assert result.content("Ans").startswith("18")
    assert result.conforms


async def test_readable_puts_a_space_after_a_marker_the_model_ran_into() -> None:
    llm = ScriptedLLM([
        "Thought]I need 3*7.\n[Action]Calculator\n[Action Input] 3*7",  # no space after two markers
        "Final Thought]21.\n[Answer]21\n",
    ])
    result = await monitor(llm).run("What is 3 * 7?")
    assert "[Action]Calculator" in result.transcript  # what the model wrote, kept as it was
    assert llm.requests[1].prompt.endswith("[Observation] 21\n[")  # and what it saw next: unchanged
    assert "[Thought] I need 3*7.\n[Action] Calculator\n[Action Input] 3*7" in result.readable
    assert result.readable.endswith("[Final Thought] 21.\n[Answer] 21")
    assert result.readable.replace(" ", "") == result.transcript.replace(" ", "")  # only spaces added


# -- the authors' correction (IBM's ApiDecodingMonitor, the default) --------------------------


def authors_monitor(llm) -> Monitor:
    return Monitor(SPEC, llm=llm, env={"Obs": calculator})


async def test_the_authors_correction_forces_the_first_valid_state_whole() -> None:
    llm = ScriptedLLM(WRONG_NEXT_STATE)
    result = await authors_monitor(llm).run("What is 3 * 7?")
    assert MonitorConfig().correction == "authors"
    assert [(c.reason, c.prefix) for c in result.corrections] == [("boundary", "["), ("forced", "[Action]"),
                                                                  ("boundary", "[")]
    assert llm.requests[1].prompt.endswith("[Thought] I will just answer. [Action]")
    assert result.conforms and result.content("Ans") == "21"


async def test_the_authors_prefix_comes_only_after_the_task_and_environment_input() -> None:
    # the paper's monitor would add "[" after the Action's content too (a boundary the model
    # reaches itself); the authors' adds it after the question and after each observation only
    llm = ScriptedLLM([
        "Thought] I need 3*7.\n[Action] Calculator\n[Action Input] 3*7\n[Observation] (hallucinated)",
        "Final Thought] It is 21.\n[Answer] 21\n",
    ])
    result = await authors_monitor(llm).run("What is 3 * 7?")
    assert [c.reason for c in result.corrections] == ["boundary", "boundary"]
    assert llm.requests[0].prompt.endswith("[Question] What is 3 * 7?\n[")
    assert llm.requests[1].prompt.endswith("[Observation] 21\n[")


async def test_a_wrong_state_among_two_valid_ones_gets_the_first_whole_not_their_common_prefix() -> None:
    # after an observation both [Thought] and [Final Thought] may follow; the model writes
    # [Answer]: the paper's monitor cuts it and prefixes "[", the authors' forces [Thought]
    replies = ["Thought] need it\n[Action] Calculator\n[Action Input] 2+2", "Answer] 4",
               *["Final Thought] 4.\n[Answer] 4"] * 24]  # the rest: whatever the run needs to end
    authors_llm, paper_llm = ScriptedLLM(list(replies)), ScriptedLLM(list(replies))
    authors = await authors_monitor(authors_llm).run("2+2?")
    paper = await monitor(paper_llm).run("2+2?")
    assert [(c.reason, c.prefix) for c in authors.corrections][2] == ("forced", "[Thought]")
    assert authors_llm.requests[2].prompt.endswith("[Observation] 4\n[Thought]")
    assert [(c.reason, c.prefix) for c in paper.corrections][2] == ("violation", "[")
    assert paper_llm.requests[2].prompt.endswith("[Observation] 4\n[")


def test_an_unknown_correction_is_refused() -> None:
    with pytest.raises(DefinitionError, match="use authors or paper"):
        MonitorConfig(correction="both")  # type: ignore[arg-type]


def test_examples_are_validated_without_loop_counts_unless_asked() -> None:
    # six Thought/Action/Observation rounds: more than react's until_5 lets a run make
    steps = "".join(f"[Thought] t{i}\n[Action] Calculator\n[Action Input] 2+2\n[Observation] 4\n" for i in range(6))
    example = f"[Question] q\n{steps}[Final Thought] f\n[Answer] 4\n"
    assert validate_examples(SPEC, example) == []  # as the authors' monitor checks examples
    (deviation,) = validate_examples(SPEC, example, loop_bounds=True)
    assert deviation.found == "Tht" and "Final Thought" in deviation.message
