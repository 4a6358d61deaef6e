"""Our ``stateflow-output-end`` extension: the Bash machine read from the paper's Table 2 prompts.

Before issue #21 this was the ``stateflow`` / ``sf-agent`` machine; StateFlow's own machine (the
authors' code) is :mod:`statebound.agents.bash.stateflow`. This reading takes the paper's Verify
prompt ("why last observation didn't return any output") for the state's cue: Init -> Solve, then
every execution decides the next state by its outcome alone:
a failed command (non-zero exit status or an upstream error string) goes to Error; a command that
ran and printed nothing goes to Verify (whose prompt asks why there was no output and to check the
last action); a command that printed output, or a ``submit``, goes to End. Solve, Verify and Error
each send their instruction (the paper's prompts), call the model and execute its action. The
environment's interaction limit (10) ends the run otherwise; the episode is then submitted as it
stands.

``rethink=True`` is our extension (agents ``stateflow-rethink`` and ``sf-agent-rethink``), not
the paper's: with greedy decoding a small model often writes the failed command again and again
(the embedded model did so 3 times in a row in 143 of 200 ``stateflow`` episodes). When the
command just run is the one run before and it did not print a result, the machine goes to
Rethink. Rethink shows the model the question and the commands that failed so far instead of the
history it keeps copying (:mod:`statebound.agents.bash.rethink`) and samples its reply at
temperature 0.7 with a fixed seed, so runs repeat. A command with output (or ``submit``) ends the
run as elsewhere; anything else stays in Rethink, since the other states, which see the history,
went back to the repeated command.
"""

from __future__ import annotations

from statebound.agents.bash import prompts
from statebound.agents.bash.rethink import rethink_messages, rethink_prompt
from statebound.agents.bash.stateflow import View
from statebound.agents.bash.tools import execute_reply, outcome_is, same_command_again
from statebound.agents.budget import transitions_for
from statebound.agents.response_format import ResponseFormat, thought_action_grammar
from statebound.flow import Agent, CallLLM, CallTool, Flow, Instruction, State, always
from statebound.flow.model import Transition
from statebound.flow.outputs import Output

__all__ = ["build_output_end"]

STOP = ("\nObservation", "Observation:")
TRANSITIONS: list[Transition] = [
    (outcome_is("submit", "output"), "End"),
    (outcome_is("error"), "Error"),
    (outcome_is("empty"), "Verify"),
]
# with rethink: a command run twice in a row without a result goes to Rethink first
RETHINK_TRANSITIONS: list[Transition] = [TRANSITIONS[0], (same_command_again, "Rethink"), *TRANSITIONS[1:]]
RETHINK_TEMPERATURE = 0.7
RETHINK_SEED = 0


def build_output_end(
    *,
    view: View = "stateflow",
    max_turns: int = 10,
    max_tokens: int = 256,
    response_format: ResponseFormat = "free",
    rethink: bool = False,
) -> Flow:
    """The output-end machine. ``view="sf-agent"`` gives each state its own agent, whose instruction is
    never added to the shared history; ``max_turns`` bounds the executed actions;
    ``response_format="grammar"`` constrains every reply to ``Thought: ...`` / ``Action: ...``;
    ``rethink=True`` adds the Rethink state (module docstring)."""
    grammar = thought_action_grammar() if response_format == "grammar" else None
    transitions = RETHINK_TRANSITIONS if rethink else TRANSITIONS

    def solving(name: str, instruction: str) -> State:
        call = CallLLM(max_tokens=max_tokens, stop=STOP, grammar=grammar)
        act: list[Output] = [call, CallTool(execute_reply, name="bash")]
        if view == "sf-agent":
            return State(
                name, agent=Agent(instruction, name=name), outputs=act, transitions=transitions
            )
        return State(name, outputs=[Instruction(instruction), *act], transitions=transitions)

    # the same in both views: its own prompt (stored, but sent without the history), sampled; only
    # a result leaves it, since the other states' history would bring the repeated command back
    rethinking = State("Rethink", transitions=[TRANSITIONS[0], (always(), "Rethink")],
                       description="a failed command came again", outputs=[
        Instruction(rethink_prompt),
        CallLLM(max_tokens=max_tokens, stop=STOP, grammar=grammar, render=rethink_messages,
                temperature=RETHINK_TEMPERATURE, seed=RETHINK_SEED),
        CallTool(execute_reply, name="bash"),
    ])
    states = [
        State("Init", transitions=[(always(), "Solve")], description="the task is given"),
        solving("Solve", prompts.PAPER_SOLVE),
        solving("Verify", prompts.PAPER_VERIFY),
        solving("Error", prompts.PAPER_ERROR),
        *([rethinking] if rethink else []),
        State("End", final=True),
    ]
    # one transition per executed action, plus Init -> Solve
    return Flow(
        name=f"{view}-rethink" if rethink else f"{view}-output-end",
        initial="Init",
        states=states,
        system=prompts.PAPER_SYSTEM,
        max_turns=transitions_for(max_turns, outside=1),
    )
