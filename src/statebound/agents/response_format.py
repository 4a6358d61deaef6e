"""Token-level response formats for the InterCode agents: GBNF grammars for local models
(ALFWorld's are in :mod:`statebound.agents.alfworld.grammar`).

With ``format="grammar"`` every reply of a model whose backend can constrain decoding
(``llm.capabilities.grammar``, e.g. llama.cpp) is forced into the shape the agent's parser reads:

- StateFlow / SF_Agent: ``Thought: <one line>`` then ``Action: execute[<command>]`` or
  ``Action: submit``;
- ReAct (the prompt ends with ``Thought n:``): ``<one line>`` then ``Action n: execute[...]`` or
  ``Action n: submit``;
- Plan & Solve's execution step: one fenced code block of one line (the plan stays free text).

The thought and the command are bounded (``THOUGHT_CHARS``, ``COMMAND_CHARS``) and stay on one
line. A command may contain ``]`` (``[ -f x ]``, ``awk '{print $1]}'``): the grammar lets the reply
end after any ``]``, and since no newline may follow, the model ends it at the last ``]`` it wants.
``format="free"`` (the default) is the papers' unconstrained behaviour.
"""

from __future__ import annotations

from typing import Literal

from statebound.errors import DefinitionError

__all__ = [
    "COMMAND_CHARS",
    "RESPONSE_FORMATS",
    "THOUGHT_CHARS",
    "ResponseFormat",
    "code_block_grammar",
    "parse_response_format",
    "thought_action_grammar",
]

ResponseFormat = Literal["free", "grammar"]
RESPONSE_FORMATS: tuple[ResponseFormat, ...] = ("free", "grammar")
# The longest demonstrated thought (upstream's SQL ReAct demos) has 249 characters, the longest
# command 233; a reply within both bounds stays under the agents' 256-token default.
THOUGHT_CHARS = 300
COMMAND_CHARS = 400


def thought_action_grammar(
    *, numbered: bool = False, thought_chars: int = THOUGHT_CHARS, command_chars: int = COMMAND_CHARS
) -> str:
    """The GBNF of a ``Thought: ...`` / ``Action: ...`` reply.

    ``numbered=True`` is ReAct's continuation of ``Thought n:``: the reply starts with the thought
    itself and labels the action ``Action n:``.
    """
    _check_bounds(thought_chars=thought_chars, command_chars=command_chars)
    if numbered:
        head = '" "? thought "\\nAction " [0-9] [0-9]? ": " action'
    else:
        head = '"Thought: " thought "\\nAction: " action'
    return "\n".join([
        f"root ::= {head}",
        f"thought ::= [^\\n]{{1,{thought_chars}}}",
        'action ::= "submit" | "execute[" command "]"',
        f"command ::= [^\\n]{{1,{command_chars}}}",
    ])  # fmt: skip


def code_block_grammar(language: str, *, command_chars: int = COMMAND_CHARS) -> str:
    """The GBNF of a code-only reply: one fenced block tagged ``language`` holding one line."""
    if not language.isalnum():
        raise DefinitionError(f"a code block's language tag must be letters or digits, got {language!r}")
    _check_bounds(thought_chars=1, command_chars=command_chars)
    return "\n".join([
        f'root ::= "```{language}\\n" code "\\n```"',
        f"code ::= [^\\n`]{{1,{command_chars}}}",
    ])  # fmt: skip


def parse_response_format(value: object, *, benchmark: str) -> ResponseFormat:
    """The benchmark option ``format`` (``free`` or ``grammar``), checked."""
    text = str(value).strip().lower()
    if text not in RESPONSE_FORMATS:
        raise DefinitionError(
            f"{benchmark} option format={value!r}: use format=free (unconstrained replies, the "
            "default) or format=grammar (replies constrained by a GBNF grammar, local models)"
        )
    return text  # type: ignore[return-value]


def _check_bounds(*, thought_chars: int, command_chars: int) -> None:
    if thought_chars < 1 or command_chars < 1:
        raise DefinitionError(
            f"grammar bounds must be at least 1 character, got thought_chars={thought_chars}, "
            f"command_chars={command_chars}"
        )
