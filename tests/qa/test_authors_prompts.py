"""The QA agents' default prompts are the PASS authors' texts (IBM/llm-agent-framework)."""

import pytest

from statebound.agents.qa.agents import QAAgentOptions, run_agent
from statebound.agents.qa.prompts import few_shot_prompt
from statebound.envs.qa import Corpus, QAEnvironment, QAItem
from statebound.llm.base import Capabilities
from statebound.llm.testing import FunctionLLM

# data/prompts/hotpot_qa.py, 'pass' instructions, as src/prompt.py cleans them, tool slots filled
PASS_HOTPOT_INSTRUCTIONS = """Answer the following questions as best you can. You have access to the following tools:
Lookup: which returns the next sentence containing keyword in the current passage.
Search: which searches the exact entity on Wikipedia and returns the first paragraph if it exists. If not, it will return some similar entities to search.
When answering a question, you should formulate a plan for how you will solve the question.
Then, you should iteratively take sets of actions until you reach a satisfactory answer.
For efficiency, try to group as many independent actions together as possible in each loop.
The format of your output should be as follows:

[Question] the input question you must answer
[Thought] a step in your plan for solving the problem
[Action] an action to take, should be one of [Lookup, Search]
[Action Input] the input to the action
... (you can list as many action/action input pairs as needed here)
[Summary] a condensed summary of the action results as they relate to the initial question and most recent plan step
... (this action gathering and summarization loop can repeat N times)
[Final Thought] this is the last thought that summarizes your findings
[Answer] this is where you write your final answer

Here are some examples.

[Question] What is the elevation range for the area that the eastern sector of the Colorado orogeny extends into?
[Thought] I need to search Colorado orogeny, find the area that the eastern sector of the Colorado orogeny extends into, then find the elevation range of the area.
[Action] Search
"""

FIRST_LINES = {
    "direct": "Answer the following questions as best you can.\nUse the following format:",
    "cot": "Answer the following questions as best you can.",
    "react": "Answer the following questions as best you can. You have access to the following tools:\nLookup: ",
    "reflexion": "Answer the following questions as best you can. You have access to the following tools:\nLookup: ",
    "rewoo": "Answer the following questions as best you can. You have access to the following tools:\nLLM: ",
}


def examples_of(prompt):
    return prompt.split("Here are some examples.\n\n", 1)[1]


def test_pass_hotpot_prompt_is_the_authors_text_with_six_examples():
    prompt = few_shot_prompt("pass", "hotpotqa")
    assert prompt.startswith(PASS_HOTPOT_INSTRUCTIONS)
    assert examples_of(prompt).count("[Question]") == 6
    assert prompt.endswith("[Answer] yes\n") and "\n\n\n" not in prompt  # examples one blank line apart
    assert examples_of(few_shot_prompt("pass", "hotpotqa", shots=2)).count("[Question]") == 2


@pytest.mark.parametrize("style", sorted(FIRST_LINES))
def test_every_hotpot_agent_has_the_authors_instructions_and_six_examples(style):
    prompt = few_shot_prompt(style, "hotpotqa")
    assert prompt.startswith(FIRST_LINES[style])
    assert examples_of(prompt).count("[Question]") == 6


def test_rewoo_on_hotpot_gets_the_authors_llm_tool_and_gsm8k_the_calculator():
    rewoo = few_shot_prompt("rewoo", "hotpotqa")
    assert "LLM: a pretrained LLM like yourself." in rewoo and "should be one of [LLM, Lookup, Search]" in rewoo
    pass_gsm8k = few_shot_prompt("pass", "gsm8k")
    assert "tools:\nCalculator: which performs numerical computations\n" in pass_gsm8k
    assert "should be one of [Calculator]" in pass_gsm8k
    assert examples_of(pass_gsm8k).count("[Question]") == 1  # gsm8k_main.py has one for the tool agents
    assert examples_of(few_shot_prompt("cot", "gsm8k")).count("[Question]") == 8


def test_pass_no_summary_gets_the_authors_pass_list_prompt():
    prompt = few_shot_prompt("pass-no-summary", "hotpotqa")
    assert "[Summary] a summary of the action results as they relate" in prompt  # pass: "a condensed summary"
    assert "[Summary] (Result 1 / 1) The eastern sector extends into the High Plains" in prompt
    assert examples_of(prompt).count("[Question]") == 6


def test_ours_on_request_and_where_the_authors_wrote_none():
    ours = few_shot_prompt("react", "hotpotqa", source="statebound")
    assert ours.startswith("Solve the question by interleaving") and "Here are some examples." not in ours
    # the authors wrote no GSM8K Reflexion prompt: ours stands in
    assert few_shot_prompt("reflexion", "gsm8k") == few_shot_prompt("reflexion", "gsm8k", source="statebound")


async def test_rewoo_llm_action_asks_the_model_with_the_authors_tool_prompt():
    corpus = Corpus.from_mapping({"Milhouse": ["Milhouse is a character named after Richard Nixon."]})
    env = QAEnvironment(items=[QAItem(id="q", question="Milhouse is named after?", answer="Richard Nixon")],
                        corpus=corpus)
    env.reset("q")

    def respond(request):
        if request.prompt.startswith("Respond in short directly with no extra words.\n\n"):
            assert request.prompt.endswith("Named after whom? Given context: Milhouse is a character named after Richard Nixon.")
            return "Richard Nixon"
        if request.prompt.startswith("Solve the provided problems"):
            assert request.prompt.endswith("Plan: Ask.\nEvidence: Richard Nixon\nAnswer:")
            return "Richard Nixon"
        return ("Plan] Search Milhouse.\n[Action Label] #E1\n[Action] Search\n[Action Input] Milhouse\n"
                "[Plan] Ask.\n[Action Label] #E2\n[Action] LLM\n[Action Input] Named after whom? Given context: #E1\n"
                "[Answer]")

    llm = FunctionLLM(respond, capabilities=Capabilities(completion=True, chat=True, logprobs=True, grammar=True))
    attempt = await run_agent("rewoo", "Milhouse is named after?", llm=llm, env=env,
                              options=QAAgentOptions(dataset="hotpotqa"))
    assert attempt.answer == "Richard Nixon" and env.actions == 1  # the LLM action is no environment call
