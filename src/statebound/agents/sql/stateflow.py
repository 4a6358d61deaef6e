"""StateFlow's SQL machine (StateFlow, Wu et al. 2024, sections 3.3 and 4.2) in both views, with its ablations.

Init (always runs SHOW TABLES) -> Observe -> Solve -> Verify -> End, plus Error. In Observe,
Solve, Verify and Error an error string (a failed or unparsable action) goes to Error; in Solve,
Verify and Error a successful SELECT goes to Verify and any other successful command (DESC, SHOW
TABLES, ...) to Solve; Observe goes to Solve. ``submit`` (or the environment's turn limit) ends
the run. Where the paper is silent this follows the authors' code
(``InterCode/experiments/flow_sql.py``): a SELECT is an action that contains ``execute[SELECT``, and
commands other than DESC and SELECT go to Solve. As in their runner
(``InterCode/experiments/eval_stateflow_sql.py``) the model sees the task as ``Question: ...`` (the
agents pass that label) followed by Init's thought, its ``execute[SHOW TABLES]`` and the observation.

Ablations (section 4.4): ``no_observe`` drops Observe (Init -> Solve); ``no_error`` drops Error
(errors go to Verify); ``no_verify`` drops Verify (a successful SELECT goes to Solve, whose prompt
then also asks the model to submit when finished).
"""

from __future__ import annotations

from typing import Literal

from statebound.agents.budget import transitions_for
from statebound.agents.response_format import ResponseFormat, thought_action_grammar
from statebound.agents.sql import prompts
from statebound.agents.sql.tools import act, action_has, failed_step, is_done, run_llm_action
from statebound.flow import (
    Agent,
    CallLLM,
    CallTool,
    Flow,
    Instruction,
    RunContext,
    State,
    ToolResult,
    always,
)
from statebound.flow.outputs import Output

__all__ = ["Ablation", "build_stateflow", "show_tables"]

Ablation = Literal["no_verify", "no_error", "no_observe"]
_STOP = ("\nObservation", "Observation:")
_SHOW_TABLES = "execute[SHOW TABLES]"


def show_tables(ctx: RunContext) -> ToolResult:
    """Init: run SHOW TABLES and show it as a thought, an action and its observation."""
    result = act(ctx, _SHOW_TABLES)
    return ToolResult(f"{prompts.INIT_THOUGHT}\nAction: {_SHOW_TABLES}\n{result.output}", ok=result.ok, data=result.data)


def build_stateflow(*, view: Literal["stateflow", "sf-agent"] = "stateflow",
                    ablation: Ablation | None = None, max_tokens: int = 256,
                    max_turns: int = 10, response_format: ResponseFormat = "free") -> Flow:
    """The SQL machine. ``view="sf-agent"`` gives each state its own agent whose instruction
    never enters the shared history; ``max_turns`` is the environment's action limit;
    ``response_format="grammar"`` constrains every reply to ``Thought: ...`` / ``Action: ...``."""
    grammar = thought_action_grammar() if response_format == "grammar" else None
    has_observe = ablation != "no_observe"
    has_error = ablation != "no_error"
    has_verify = ablation != "no_verify"
    solve_prompt = prompts.SOLVE if has_verify else prompts.SOLVE + "\n" + prompts.SOLVE_SUBMIT_SENTENCE

    def state(name: str, instruction: str) -> State:
        call: list[Output] = [CallLLM(max_tokens=max_tokens, stop=_STOP, grammar=grammar), CallTool(run_llm_action, name="sql")]
        on_error = "Error" if has_error else ("Verify" if has_verify else "Solve")
        transitions: list = [(is_done, "End"), (failed_step, on_error)]
        if name != "Observe":
            transitions.append((action_has("execute[SELECT"), "Verify" if has_verify else "Solve"))
        transitions.append((always(), "Solve"))
        if view == "sf-agent":
            return State(name, agent=Agent(instruction, name=name), outputs=call, transitions=transitions)
        return State(name, outputs=[Instruction(instruction), *call], transitions=transitions)

    states = [
        State("Init", outputs=[CallTool(show_tables, name="sql")],
              transitions=[(is_done, "End"), (always(), "Observe" if has_observe else "Solve")]),
        state("Solve", solve_prompt),
        State("End", final=True),
    ]
    if has_observe:
        states.append(state("Observe", prompts.OBSERVE))
    if has_error:
        states.append(state("Error", prompts.ERROR))
    if has_verify:
        states.append(state("Verify", prompts.VERIFY))
    name = view if ablation is None else f"{view}-{ablation.replace('_', '-')}"
    # every transition but Init's follows one environment action, so the environment's turn
    # limit (it submits at max_turns) ends the run first; the flow's own limit is a backstop
    return Flow(name=name, initial="Init", states=states, system=prompts.SYSTEM,
                max_turns=transitions_for(max_turns, outside=2))
