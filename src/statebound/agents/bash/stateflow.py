"""StateFlow's Bash machine (StateFlow, Wu et al. 2024, section 4.2) in both views, as the authors' code runs it.

The paper gives five states, Init, Solve, Verify, Error and End, and says the transitions depend
only on whether an execution succeeded; where it is silent this follows the authors' code
(``InterCode/experiments/flow_bash.py``, ``state_transition`` and ``check_success``):

- Init -> Solve (the model sees ``Question: ...``; the agents pass that label);
- Solve, Verify and Error each send their prompt, call the model and execute its action;
- an execution whose observation holds one of the authors' error strings (``command not found``,
  ``No such file or directory``, ``syntax error``, ... :data:`~statebound.agents.bash.tools.AUTHORS_ERROR_MARKERS`)
  goes to Error; the exit status plays no part, so a ``grep`` that finds nothing is a success;
- any other execution goes to Verify, from every state (an unparsable action too: its observation
  holds none of the strings); Verify's prompt asks for ``submit`` once the question is answered;
- ``submit`` ends the run in End. At the turn limit (10 actions, ``submit`` included) the
  environment's runner submits the episode as it stands.

The prompts are the authors' (:mod:`statebound.agents.bash.prompts`). In the SF_Agent view each
state is its own agent and, like the authors' ``PromptAssistant``, sends one user message: its
prompt, ``Here is the question and current progress:`` and the conversation so far, one message
per line, under the system message. In the StateFlow view the prompts enter the shared history.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from statebound.agents.bash import prompts
from statebound.agents.bash.tools import execute_as_authors, outcome_is
from statebound.agents.budget import transitions_for
from statebound.agents.response_format import ResponseFormat, thought_action_grammar
from statebound.flow import CallLLM, CallTool, Flow, Instruction, RunContext, State, always
from statebound.flow.model import Transition
from statebound.llm.base import Message

__all__ = ["STOP", "TRANSITIONS", "View", "build_stateflow", "progress_messages"]

View = Literal["stateflow", "sf-agent"]
STOP = ("\nObservation", "Observation:")
TRANSITIONS: list[Transition] = [
    (outcome_is("submit"), "End"),
    (outcome_is("error"), "Error"),
    (always(), "Verify"),
]
_CONVERSATION = ("task", "llm", "tool")  # what the group chat's agents saw: no state prompts


def progress_messages(instruction: str) -> Callable[[RunContext], list[Message]]:
    """The SF_Agent view's request: the system message, then the state's ``instruction``, the
    progress header and every message of the conversation so far (stripped, one per line)."""

    def render(ctx: RunContext) -> list[Message]:
        conversation = "".join("\n" + e.content.strip() for e in ctx.history if e.source in _CONVERSATION)
        return [Message("system", prompts.SYSTEM), Message("user", instruction + prompts.PROGRESS_HEADER + conversation)]

    return render


def build_stateflow(
    *,
    view: View = "stateflow",
    max_turns: int = 10,
    max_tokens: int = 256,
    response_format: ResponseFormat = "free",
) -> Flow:
    """The authors' Bash machine. ``view="sf-agent"`` gives each state its own prompt, never added
    to the shared history; ``max_turns`` bounds the actions (``submit`` included);
    ``response_format="grammar"`` holds every reply to ``Thought: ...`` / ``Action: ...``."""
    grammar = thought_action_grammar() if response_format == "grammar" else None

    def acting(name: str, instruction: str) -> State:
        if view == "sf-agent":
            call = CallLLM(max_tokens=max_tokens, stop=STOP, grammar=grammar, render=progress_messages(instruction))
            return State(name, outputs=[call, CallTool(execute_as_authors, name="bash")], transitions=TRANSITIONS)
        call = CallLLM(max_tokens=max_tokens, stop=STOP, grammar=grammar)
        return State(name, outputs=[Instruction(instruction), call, CallTool(execute_as_authors, name="bash")],
                     transitions=TRANSITIONS)

    states = [
        State("Init", transitions=[(always(), "Solve")], description="the question is given"),
        acting("Solve", prompts.SOLVE),
        acting("Verify", prompts.VERIFY),
        acting("Error", prompts.ERROR),
        State("End", final=True),
    ]
    # one transition per action, plus Init -> Solve
    return Flow(name=view, initial="Init", states=states, system=prompts.SYSTEM,
                max_turns=transitions_for(max_turns, outside=1))
