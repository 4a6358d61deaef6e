"""The response-format grammars: llama.cpp parses them, and they accept the agents' own few-shot
replies (checked with llama.cpp's grammar engine) in the shape the agents' parsers read."""

from __future__ import annotations

import re
from itertools import pairwise

import pytest
from grammar_check import grammar_accepts, grammar_parses

from statebound.agents.bash import prompts as bash_prompts
from statebound.agents.bash.tools import action_from_reply, code_from_reply
from statebound.agents.response_format import (
    code_block_grammar,
    parse_response_format,
    thought_action_grammar,
)
from statebound.agents.sql import prompts as sql_prompts
from statebound.agents.sql.tools import extract_action, extract_code
from statebound.errors import DefinitionError

STATEFLOW = thought_action_grammar()
REACT = thought_action_grammar(numbered=True)
STATEFLOW_PROMPTS = [
    *(getattr(sql_prompts, n) for n in ("SOLVE", "ERROR", "VERIFY")),
    *(getattr(bash_prompts, n) for n in ("SOLVE", "ERROR", "VERIFY")),
]
REACT_DEMOS = [sql_prompts.REACT_DEMOS, sql_prompts.REACT_REFINED_DEMOS, bash_prompts.REACT_DEMOS]
_LABEL = re.compile(r"^(Question|Thought \d+|Action \d+|Observation \d+):", re.MULTILINE)


def stateflow_examples() -> list[str]:
    """Every ``Thought: ...`` line directly followed by an ``Action: ...`` line in the prompts
    (the response templates, ``Thought: <your thought>``, are not examples)."""
    replies = []
    for prompt in STATEFLOW_PROMPTS:
        lines = prompt.splitlines()
        replies += [f"{a}\n{b}" for a, b in pairwise(lines)
                    if a.startswith("Thought: ") and b.startswith("Action: ") and "<your" not in a]  # fmt: skip
    return replies


def react_examples() -> list[tuple[str, str]]:
    """(reply, action) of every demonstrated ReAct step, as the model writes it after
    ``Thought n:``. Lines the demonstrations wrap (upstream's line breaks) are joined."""
    examples = []
    for demos in REACT_DEMOS:
        starts = [m.start() for m in _LABEL.finditer(demos)]
        fields = [demos[a:b].strip() for a, b in zip(starts, [*starts[1:], len(demos)])]
        for thought, action in pairwise(fields):
            if thought.startswith("Thought") and action.startswith("Action"):
                text = thought.split(":", 1)[1].strip().replace("\n", " ")
                label, command = action.split(":", 1)
                command = command.strip().replace("\n", " ")
                examples.append((f" {text}\n{label}: {command}", command))
    return examples


def test_every_grammar_parses_in_llama_cpp():
    grammars = [STATEFLOW, REACT, code_block_grammar("SQL"), code_block_grammar("bash")]
    assert all(grammar_parses(g) for g in grammars)
    assert not grammar_parses(STATEFLOW.replace("command ::=", "commands ::="))  # the check can fail


def test_stateflow_grammar_accepts_the_prompt_examples():
    examples = stateflow_examples()
    assert len(examples) >= 10  # SQL and Bash Solve, Error and Verify examples
    for reply in examples:
        assert grammar_accepts(STATEFLOW, reply), reply
        action = reply.split("\nAction: ", 1)[1]
        assert extract_action(reply) == action and action_from_reply(reply) == action


def test_react_grammar_accepts_the_demonstrations():
    examples = react_examples()
    assert len(examples) >= 30 and any(a == "submit" for _, a in examples)
    # upstream's Bash demonstrations write one action without execute[...]; kept verbatim
    slips = [a for _, a in examples if a != "submit" and not a.startswith("execute[")]
    assert slips == ["touch testbed/hello.txt"]
    for reply, action in examples:
        if action in slips:
            continue
        assert grammar_accepts(REACT, reply), reply
        assert extract_action(reply) == action and action_from_reply(reply) == action


@pytest.mark.parametrize(
    "reply",
    [
        "**Thought:** I will list the tables.\n\n```sql\nSHOW TABLES;\n```",  # markdown
        "Thought: look\nAction: execute[SHOW TABLES",  # unclosed
        "Thought: look\nAction: execute[SHOW TABLES]\nObservation: made up",  # a second line
        "Thought: look\nAction: execute[SELECT *\nFROM t]",  # a command over two lines
        "Thought: \nAction: submit",  # an empty thought
        "Thought: " + "x" * 301 + "\nAction: submit",  # a thought over the bound
    ],
)
def test_stateflow_grammar_rejects_other_shapes(reply):
    assert not grammar_accepts(STATEFLOW, reply)


def test_commands_may_hold_brackets_and_end_at_the_last_one():
    reply = "Thought: test it\nAction: execute[[ -f /testbed/a ] && echo yes]"
    assert grammar_accepts(STATEFLOW, reply)
    assert action_from_reply(reply) == "execute[[ -f /testbed/a ] && echo yes]"


def test_react_grammar_wants_the_numbered_label():
    assert grammar_accepts(REACT, "I should look.\nAction 12: submit")
    assert not grammar_accepts(REACT, "I should look.\nAction: submit")
    assert not grammar_accepts(REACT, " I should look.\nAction 3: execute[ls]\nObservation 3: x")


def test_code_block_grammars_give_what_plan_and_solve_parsers_read():
    sql = "```SQL\nSELECT count(*) FROM paragraphs\n```"
    assert grammar_accepts(code_block_grammar("SQL"), sql)
    assert extract_code(sql) == "SELECT count(*) FROM paragraphs"
    bash = "```bash\nfind /testbed -type f | wc -l\n```"
    assert grammar_accepts(code_block_grammar("bash"), bash)
    assert code_from_reply(bash) == "execute[find /testbed -type f | wc -l]"
    assert not grammar_accepts(code_block_grammar("bash"), "```bash\nls\nwc -l\n```")


def test_options_and_capability_errors_name_the_option():
    assert parse_response_format("Grammar", benchmark="b") == "grammar"
    with pytest.raises(DefinitionError, match="format=free .* format=grammar"):
        parse_response_format("json", benchmark="intercode-sql")
    with pytest.raises(DefinitionError, match="at least 1"):
        thought_action_grammar(command_chars=0)
    with pytest.raises(DefinitionError, match="language tag"):
        code_block_grammar("c++")
