"""Span attribute names: the OpenTelemetry GenAI semantic conventions' and statebound's own."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["choice_attributes", "tool_attributes"]

OPERATION = "gen_ai.operation.name"
PROVIDER = "gen_ai.provider.name"
SYSTEM = "gen_ai.system"  # the older name of PROVIDER, still read by many viewers
REQUEST_MODEL = "gen_ai.request.model"
RESPONSE_MODEL = "gen_ai.response.model"
MAX_TOKENS = "gen_ai.request.max_tokens"
TEMPERATURE = "gen_ai.request.temperature"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
FINISH_REASONS = "gen_ai.response.finish_reasons"
AGENT_NAME = "gen_ai.agent.name"
TOOL_NAME = "gen_ai.tool.name"
# content, only when asked for (docs/tracing.md): the GenAI conventions' names, and OpenInference's
# input.value / output.value, which Phoenix shows as a span's input and output
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
TOOL_ARGUMENTS = "gen_ai.tool.call.arguments"
TOOL_RESULT = "gen_ai.tool.call.result"
INPUT_VALUE = "input.value"
OUTPUT_VALUE = "output.value"
ERROR_TYPE = "error.type"
MCP_METHOD = "mcp.method.name"  # the MCP semantic conventions'

FLOW = "statebound.flow"
STATE = "statebound.state"
VISIT = "statebound.visit"
TURN = "statebound.turn"
EXIT_REASON = "statebound.exit_reason"
EXIT_STATE = "statebound.exit_state"
TARGET = "statebound.transition.target"
REASON = "statebound.transition.reason"
TOOL_OK = "statebound.tool.ok"
MCP_SERVER = "statebound.mcp.server"
CHOICE_NAME = "statebound.choice.name"
CHOICE_METHOD = "statebound.choice.method"
CANDIDATES = "statebound.choice.candidates"
SCORES = "statebound.choice.scores"
PICKED = "statebound.choice.picked"
BENCHMARK = "statebound.benchmark"
TASK = "statebound.task.id"
AGENT = "statebound.agent"
MODEL = "statebound.model"
SEED = "statebound.seed"
REWARD = "statebound.reward"
SUCCESS = "statebound.success"
ERROR = "statebound.error"
EPISODES = "statebound.episodes"
AGENTS = "statebound.agents"
MODELS = "statebound.models"


def tool_attributes(name: str, ok: bool, data: Any) -> dict[str, Any]:
    """A tool entry's span attributes; a call of an MCP server's tool (``data["mcp"]``, or under
    ``data["data"]`` for a call the model made) also names the server and any failure's kind."""
    out: dict[str, Any] = {OPERATION: "execute_tool", TOOL_NAME: name, TOOL_OK: ok}
    inner = data.get("data") if isinstance(data, Mapping) and "tool_call" in data else data
    record = inner.get("mcp") if isinstance(inner, Mapping) else None
    if isinstance(record, Mapping):
        out.update({MCP_METHOD: "tools/call", MCP_SERVER: str(record.get("server", ""))})
        if record.get("error"):
            out[ERROR_TYPE] = str(record["error"])
    return out


def choice_attributes(choice: Mapping[str, Any]) -> dict[str, Any]:
    """A recorded choice (``Picked.to_data()["choice"]``) as span attributes: every candidate and
    its score (absent scores left out) and the one picked (for a transition, its target state)."""
    candidates = [str(c) for c in choice.get("candidates", ())]
    picked = choice.get("picked")
    out: dict[str, Any] = {CANDIDATES: candidates, CHOICE_METHOD: str(choice.get("method", ""))}
    if choice.get("name"):
        out[CHOICE_NAME] = str(choice["name"])
    named = [str(t) for t in choice.get("targets", ())] or candidates  # a transition's: its states
    if isinstance(picked, int) and 0 <= picked < len(named):
        out[PICKED] = named[picked]
    scores = choice.get("scores")
    if scores and all(isinstance(s, (int, float)) for s in scores):
        out[SCORES] = [float(s) for s in scores]
    return out
