"""The prompt of the Rethink state (our extension of the output-end machine, see ``build_output_end``).

A model that has written the same failed command several times copies it from its own history,
even when sampling. Rethink therefore does not send the history: it sends the system prompt, the
question and the commands tried so far that failed or printed nothing, each with the first line
of what it printed, then the (paper's) Solve state's instruction and examples.
"""

from __future__ import annotations

from statebound.agents.bash import prompts
from statebound.flow import RunContext
from statebound.llm.base import Message

__all__ = ["TRIED_SHOWN", "rethink_messages", "rethink_prompt", "tried_commands"]

TRIED_SHOWN = 5  # the latest distinct commands listed
_OBSERVATION_CHARS = 120


def tried_commands(ctx: RunContext) -> list[tuple[str, str]]:
    """``(action, first line of its output)`` of the distinct commands that failed or printed
    nothing, oldest first, the latest :data:`TRIED_SHOWN` of them."""
    tried: dict[str, str] = {}
    for entry in ctx.history:
        data = entry.data if entry.source == "tool" and isinstance(entry.data, dict) else {}
        if data.get("outcome") in ("error", "empty"):
            lines = str(data.get("observation", "")).strip().splitlines()
            tried.pop(data["action"], None)  # re-insert: order by latest use
            tried[data["action"]] = lines[0][:_OBSERVATION_CHARS] if lines else "nothing"
    return list(tried.items())[-TRIED_SHOWN:]


def rethink_prompt(ctx: RunContext) -> str:
    """The question, the failed commands, then Solve's instruction and examples."""
    tried = "\n".join(f"- {action} (it printed: {output})" for action, output in tried_commands(ctx))
    return prompts.RETHINK.format(question=ctx.task, tried=tried) + prompts.PAPER_SOLVE


def rethink_messages(ctx: RunContext) -> list[Message]:
    """What the model is sent: the system prompt and the prompt just stored by the state's
    ``Instruction(rethink_prompt)`` (stored, so trajectories and ``statebound show`` have it)."""
    prompt = ctx.last_of("instruction")
    return [Message("system", prompts.PAPER_SYSTEM), Message("user", prompt.content if prompt else rethink_prompt(ctx))]
