"""The QA agents under the decoding monitor, driven by function LLMs that act like a model."""

import pytest

from statebound.agents.qa.agents import QAAgentOptions, bundled_spec, parse_agent, run_agent
from statebound.agents.qa.authors_prompts import authors_summary_prompt
from statebound.agents.qa.prompts import few_shot_prompt
from statebound.agents.qa.summary_choice import length_penalty
from statebound.envs.qa import Corpus, QAEnvironment, QAItem
from statebound.errors import DefinitionError
from statebound.llm.base import Capabilities, Choice, TokenLogprob
from statebound.llm.testing import FunctionLLM, ScriptedLLM
from statebound.spec.examples import validate_examples

CAPS = Capabilities(completion=True, chat=True, logprobs=True, grammar=True)
QUESTION = "Which magazine was started first Arthur's Magazine or First for Women?"
CORPUS = Corpus.from_mapping(
    {
        "Arthur's Magazine": ["Arthur's Magazine (1844-1846) was an American literary periodical."],
        "First for Women": ["First for Women is a woman's magazine.", "The magazine was started in 1989."],
    }
)
HOTPOT = QAAgentOptions(dataset="hotpotqa")
FIRST_FOR_WOMEN = "First for Women is a woman's magazine. The magazine was started in 1989."  # Search's reply


def hotpot_env():
    env = QAEnvironment(items=[QAItem(id="q", question=QUESTION, answer="Arthur's Magazine")], corpus=CORPUS)
    env.reset("q")
    return env


def current_run(request):
    """The transcript of the question being answered (after the few-shot examples)."""
    return request.prompt.rsplit("[Question]", 1)[1]


@pytest.mark.parametrize("style", ["direct", "cot", "react", "rewoo", "reflexion", "pass", "pass-no-summary"])
@pytest.mark.parametrize("dataset", ["hotpotqa", "gsm8k"])
@pytest.mark.parametrize("source", ["authors", "statebound"])
def test_few_shot_examples_conform_to_the_bundled_specs(style, dataset, source):
    prompt = few_shot_prompt(style, dataset, shots=6, source=source)
    examples = prompt.split("Here are some examples.")[-1]  # the authors' instructions show the format
    assert examples.count("[Question]") >= 1
    assert validate_examples(bundled_spec(style), examples) == []


def test_spec_check_would_catch_a_wrong_format():
    assert validate_examples(bundled_spec("cot"), few_shot_prompt("react", "hotpotqa", shots=1)) != []


SUMMARY_PROMPT_STARTS = ("Summarize the statements", "You will be given a list of statements")
BOTH_SEARCHES = "[Action] Search\n[Action Input] Arthur's Magazine\n[Action] Search\n[Action Input] First for Women\n"


def pass_llm(*, summary_logprob, raw_logprob, actions=BOTH_SEARCHES):
    summary = "Arthur's Magazine started in 1844 and First for Women in 1989."

    def respond(request):
        if request.grammar is not None:  # scoring a forced continuation
            text = request.grammar.split('"', 1)[1][:-1]
            value = summary_logprob if text == summary else raw_logprob
            return Choice(text=text, logprobs=tuple(TokenLogprob(w, value) for w in text.split()))
        if request.prompt.startswith(SUMMARY_PROMPT_STARTS):
            return summary
        run = current_run(request)
        if "[Summary]" not in run:
            return f"Thought] I need both start years.\n{actions}[Summary]"
        return "Final Thought] 1844 < 1989.\n[Answer] Arthur's Magazine\n"

    return FunctionLLM(respond, capabilities=CAPS), summary


async def test_pass_runs_the_step_actions_and_returns_the_likelier_summary():
    llm, summary = pass_llm(summary_logprob=-0.1, raw_logprob=-2.0)
    env = hotpot_env()
    attempt = await run_agent("pass", QUESTION, llm=llm, env=env, options=HOTPOT)
    assert attempt.answer == "Arthur's Magazine"
    assert f"[Summary] {summary}" in attempt.text
    assert env.actions == 2  # both searches of the step ran
    assert attempt.meta["summaries_returned"] == 1 and attempt.meta["raw_returned"] == 0
    detail = next(e.to_dict() for e in attempt.trace if e.data.get("kind") == "summary")
    assert detail["returned"] == "summary" and detail["summary_score"] > detail["raw_score"]
    scoring = [r for r in llm.requests if r.grammar is not None]
    assert len(scoring) == 2 and all(r.logprobs for r in scoring)
    assert scoring[0].prompt.endswith("[Summary] ")  # x is the agent's context so far
    summary_request = next(r for r in llm.requests if r.prompt.startswith(SUMMARY_PROMPT_STARTS))
    # the authors' ToolSetSummarizeHandler: prefix, format, five examples, suffix, statements one a line
    assert summary_request.prompt == authors_summary_prompt(
        ["Arthur's Magazine (1844-1846) was an American literary periodical.", FIRST_FOR_WOMEN],
        QUESTION, "I need both start years.")
    assert summary_request.prompt.startswith(
        "You will be given a list of statements, a context, and a goal you are trying to solve. Your task is to "
        "summarize the list of statements as they relate to the provided goal while keeping the context in mind "
        "as best you can. The format of your output should be as follows:\n\nStatements: A list of N statements "
        "to summarize\nContext: the context to keep in mind for the summary\nGoal: the goal to focus on\nSummary: "
        "the list of statements summarized\n\nHere are a few examples.\n\nStatements: 1. The Colorado orogeny")
    assert summary_request.prompt.count("\nSummary: ") == 6  # the format and five examples
    assert summary_request.prompt.endswith(
        "Summary: Arthur's Magazine was started in 1844 while First for Women was started in 1989\n\n"
        "Now begin to solve the task or problem. Respond with a concise summary.\n\n"
        "Statements: Arthur's Magazine (1844-1846) was an American literary periodical.\n"
        f"{FIRST_FOR_WOMEN}\nContext: {QUESTION}\nGoal: I need both start years.\nSummary:")
    assert summary_request.max_tokens == 128 and summary_request.stop == ("\n",)
    assert attempt.usage.calls == len(llm.requests)


async def test_pass_summary_statebound_variant_keeps_our_reading():
    llm, summary = pass_llm(summary_logprob=0.0, raw_logprob=0.0)  # a tie: ours keeps the summary
    options = QAAgentOptions(dataset="hotpotqa", summary="statebound")
    attempt = await run_agent("pass", QUESTION, llm=llm, env=hotpot_env(), options=options)
    assert f"[Summary] {summary}" in attempt.text
    request = next(r for r in llm.requests if r.prompt.startswith(SUMMARY_PROMPT_STARTS))
    assert request.prompt.startswith("Summarize the statements") and request.max_tokens == 96
    assert ("Statements: Arthur's Magazine (1844-1846) was an American literary periodical. "
            f"{FIRST_FOR_WOMEN}\n") in request.prompt


async def test_pass_tie_returns_the_raw_list_one_result_a_line():
    llm, _ = pass_llm(summary_logprob=0.0, raw_logprob=0.0)
    attempt = await run_agent("pass", QUESTION, llm=llm, env=hotpot_env(), options=HOTPOT)
    assert ("[Summary] Arthur's Magazine (1844-1846) was an American literary periodical.\n"
            f"{FIRST_FOR_WOMEN}\n[Final Thought]") in attempt.text
    assert attempt.meta["raw_returned"] == 1


@pytest.mark.parametrize(("summary", "alpha"), [("authors", 0.3), ("statebound", 0.6)])
async def test_pass_alpha_is_the_summary_variants(summary, alpha):
    # summary: 4 tokens at -1 -> -4 / lp(4); raw: 19 tokens (of its words) at -0.3 -> -5.7 / lp(19)
    llm, _ = pass_llm(summary_logprob=-1.0, raw_logprob=-0.3)
    options = QAAgentOptions(dataset="hotpotqa", summary=summary)
    attempt = await run_agent("pass", QUESTION, llm=llm, env=hotpot_env(), options=options)
    detail = next(e.to_dict() for e in attempt.trace if e.data.get("kind") == "summary")
    assert detail["summary_score"] == pytest.approx(-11.0 / length_penalty(11, alpha=alpha))


async def test_pass_runs_a_steps_actions_one_after_another():
    # the Lookup sees the page the Search before it in the same step found (the authors' code)
    actions = "[Action] Search\n[Action Input] First for Women\n[Action] Lookup\n[Action Input] started\n"
    llm, _ = pass_llm(summary_logprob=-3.0, raw_logprob=-0.2, actions=actions)
    attempt = await run_agent("pass-no-summary", QUESTION, llm=llm, env=hotpot_env(), options=HOTPOT)
    assert f"[Summary] {FIRST_FOR_WOMEN}\n(Result 1 / 1) The magazine was started in 1989.\n" in attempt.text


async def test_pass_returns_the_raw_list_when_it_is_likelier():
    llm, _ = pass_llm(summary_logprob=-3.0, raw_logprob=-0.2)
    attempt = await run_agent("pass", QUESTION, llm=llm, env=hotpot_env(), options=HOTPOT)
    assert "[Summary] Arthur's Magazine (1844-1846) was an American literary periodical.\nFirst for" in attempt.text
    assert attempt.meta["raw_returned"] == 1


async def test_pass_no_summary_skips_summarising_and_scoring():
    llm, _ = pass_llm(summary_logprob=0.0, raw_logprob=-9.0)
    attempt = await run_agent("pass-no-summary", QUESTION, llm=llm, env=hotpot_env(), options=HOTPOT)
    assert "[Summary] Arthur's Magazine" in attempt.text
    assert not any(r.grammar or r.prompt.startswith(SUMMARY_PROMPT_STARTS) for r in llm.requests)
    assert attempt.answer == "Arthur's Magazine"


async def test_react_runs_one_tool_per_observation():
    llm = ScriptedLLM(
        [
            "Thought] Search it.\n[Action] Search\n[Action Input] First for Women\n[Observation] made up",
            "Thought] Find the year.\n[Action] Lookup\n[Action Input] started\n[Observation]",
            "Final Thought] 1989 is later than 1844.\n[Answer] Arthur's Magazine\n",
        ]
    )
    env = hotpot_env()
    attempt = await run_agent("react", QUESTION, llm=llm, env=env, options=HOTPOT)
    assert "[Observation] First for Women is a woman's magazine." in attempt.text
    assert "made up" not in attempt.text  # the model may not write observations
    assert "[Observation] (Result 1 / 1) The magazine was started in 1989." in attempt.text
    assert attempt.answer == "Arthur's Magazine" and env.actions == 2
    observed = [(e.role, e.data.get("action")) for e in attempt.trace if e.state == "Obs"]
    # each observation is preceded by the tool call that produced it
    assert observed == [("tool", "Search[First for Women]"), ("tool", None), ("tool", "Lookup[started]"), ("tool", None)]
    assert attempt.trace[0].to_dict() == {"state": "Ques", "role": "user", "content": QUESTION}


async def test_react_counts_monitor_corrections():
    llm = ScriptedLLM(
        [
            "Answer] too early",  # after the question only [Thought] or [Final Thought] may come
            " Search it.\n[Action] Search\n[Action Input] Arthur's Magazine",  # after the forced [Thought]
            "Final Thought] I know it.\n[Answer] Arthur's Magazine\n",
        ]
    )
    attempt = await run_agent("react", QUESTION, llm=llm, env=hotpot_env(), options=HOTPOT)
    assert attempt.answer == "Arthur's Magazine"
    assert attempt.meta["violations"] >= 1 and attempt.meta["corrections"] >= 1


@pytest.mark.parametrize(("correction", "after_violation"), [("authors", "[Thought]"), ("paper", "[")])
async def test_the_monitors_correction_is_an_option(correction, after_violation):
    # -O correction=authors (IBM's monitor, the default) forces the first valid state's marker after
    # the wrong [Answer]; correction=paper prefixes the common part of [Thought] and [Final Thought]
    llm = ScriptedLLM(["Answer] too early", *["Final Thought] I know it.\n[Answer] Arthur's Magazine\n"] * 9])
    options = QAAgentOptions(dataset="hotpotqa", correction=correction)
    await run_agent("react", QUESTION, llm=llm, env=hotpot_env(), options=options)
    assert llm.requests[1].prompt.endswith(f"[Question] {QUESTION}\n{after_violation}")


REWOO_PLAN = ("Plan] Search the first.\n[Action Label] #E1\n[Action] Search\n[Action Input] Arthur's Magazine\n"
              "[Plan] Search the second.\n[Action Label] #E2\n[Action] Search\n[Action Input] First for Women\n"
              "[Answer]")
SOLVER_STARTS = ("Solve the task", "Solve the provided problems")


def rewoo_llm():
    """Writes REWOO_PLAN; as the solver, answers on the first line."""
    def respond(request):
        return "Arthur's Magazine\nextra line" if request.prompt.startswith(SOLVER_STARTS) else REWOO_PLAN

    return FunctionLLM(respond, capabilities=CAPS)


async def test_rewoo_executes_the_plan_then_solves_with_the_authors_solver_prompt():
    llm = rewoo_llm()
    env = hotpot_env()
    attempt = await run_agent("rewoo", QUESTION, llm=llm, env=env, options=HOTPOT)
    assert attempt.answer == "Arthur's Magazine" and env.actions == 2
    solver = next(r for r in llm.requests if r.prompt.startswith(SOLVER_STARTS))
    # src/states/solver.py: _PREFIX, _FORMAT, _SUFFIX, then Question/Plan/Evidence lines and Answer:
    assert solver.prompt == (
        "Solve the provided problems as best you can. To assist you, we have provided some plans and evidence "
        "that might be helpful. Notice that some of the information may contain noise so you should trust them "
        "with caution. The format of your output should be as follows:\n\nQuestion: your question to solve\n"
        "Plan: a relevant step towards answering the question\nEvidence: evidence resulting from executing the "
        "previous plan step\n(... you can have up to N plan / evidence steps)\nAnswer: the answer to the question"
        "\n\nNow begin to solve the task or problem. Respond with the answer directly with no extra words.\n\n"
        f"Question: {QUESTION}\nPlan: Search the first.\nEvidence: Arthur's Magazine (1844-1846) was an American "
        f"literary periodical.\nPlan: Search the second.\nEvidence: {FIRST_FOR_WOMEN}\nAnswer:")
    assert solver.max_tokens == 128 and solver.stop == ("\n",)


async def test_rewoo_statebound_solver_substitutes_labels():
    llm = rewoo_llm()
    options = QAAgentOptions(dataset="hotpotqa", prompts="statebound")
    attempt = await run_agent("rewoo", QUESTION, llm=llm, env=hotpot_env(), options=options)
    assert attempt.answer == "Arthur's Magazine"
    solver = next(r.prompt for r in llm.requests if r.prompt.startswith("Solve the task"))
    assert "#E1 = Search[Arthur's Magazine]: Arthur's Magazine (1844-1846)" in solver


async def test_reflexion_evaluation_uses_the_gold_answer():
    replies = [
        "Final Thought] Guess.\n[Proposed Answer] First for Women\n[Evaluation]",
        (
            "Reflection] Wrong; search instead.\n[Final Thought] It is the older one.\n"
            "[Proposed Answer] Arthur's Magazine\n[Evaluation]"
        ),
        "Reflection] Correct.\n[Answer] Arthur's Magazine\n",
    ]
    llm = ScriptedLLM(replies)
    attempt = await run_agent("reflexion", QUESTION, llm=llm, env=hotpot_env(), options=HOTPOT)
    evaluations = [e.content for e in attempt.trace if e.state == "Eval"]
    assert evaluations == ["Incorrect", "Correct"]  # the authors' src/states/evaluator.py
    assert attempt.answer == "Arthur's Magazine"
    ours = await run_agent("reflexion", QUESTION, llm=ScriptedLLM(replies), env=hotpot_env(),
                           options=QAAgentOptions(dataset="hotpotqa", prompts="statebound"))
    assert [e.content for e in ours.trace if e.state == "Eval"][0] == "The proposed answer is incorrect."


async def test_cot_self_consistency_samples_k_times_at_temperature_07(continue_with):
    answers = iter(["18", "17", "18.0", "20", "$18"])

    def respond(request):
        return continue_with(request.prompt, f"[Thought] some reasoning\n[Answer] {next(answers)}\n")

    llm = FunctionLLM(respond, capabilities=CAPS)
    env = QAEnvironment(items=[QAItem(id="g", question="Eggs?", answer="18")], tools=("Calculator",), kind="number")
    env.reset("g")
    attempt = await run_agent("cot", "Eggs?", llm=llm, env=env, options=QAAgentOptions(dataset="gsm8k"), seed=3)
    assert attempt.answer == "18" and attempt.meta["votes"] == 3 and attempt.meta["violations"] == 0
    assert [r.temperature for r in llm.requests] == [0.7] * 5
    assert sorted(r.seed for r in llm.requests) == [3000, 3001, 3002, 3003, 3004]


@pytest.mark.parametrize(("answers", "fell_back"), [(["a", "b", "c", "d", "e"], True), (["a", "b", "a", "d", "e"], False)])
async def test_hybrid_calls_the_agent_only_without_a_repeated_answer(answers, fell_back, continue_with):
    pending = iter(answers)

    def respond(request):
        if request.temperature == 0.7:
            return continue_with(request.prompt, f"[Thought] hmm\n[Answer] {next(pending)}\n")
        return continue_with(request.prompt, "[Final Thought] Found it.\n[Answer] Arthur's Magazine\n")

    llm = FunctionLLM(respond, capabilities=CAPS)
    attempt = await run_agent("cot->react", QUESTION, llm=llm, env=hotpot_env(), options=HOTPOT)
    assert attempt.meta["fell_back"] is fell_back and attempt.meta["violations"] == 0
    assert attempt.answer == ("Arthur's Magazine" if fell_back else "a")
    assert len(llm.requests) == (6 if fell_back else 5)


def test_agent_names():
    assert parse_agent("cot->pass") == ("cot", "pass")
    assert parse_agent("pass-no-summary") == ("pass-no-summary", None)
    with pytest.raises(DefinitionError, match="unknown QA agent 'cott'"):
        parse_agent("cott->pass")


async def test_pass_fails_fast_on_a_backend_that_cannot_score():
    from statebound.errors import UnsupportedFeature

    llm = ScriptedLLM([], capabilities=Capabilities(completion=True, chat=True, logprobs=True))
    with pytest.raises(UnsupportedFeature, match="pass-no-summary"):
        await run_agent("cot->pass", QUESTION, llm=llm, env=hotpot_env(), options=HOTPOT)
    assert llm.requests == []  # refused before any model call
