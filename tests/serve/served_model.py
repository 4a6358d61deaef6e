"""The model the server tests run with: a draft, or a payment then "done"; each call logged."""

from __future__ import annotations

import os

from statebound.llm.base import Choice, ToolCall


def respond(request):
    last = request.messages[-1]
    if os.environ.get("MODEL_LOG"):
        with open(os.environ["MODEL_LOG"], "a") as log:
            log.write(f"{last.role}: {last.content.replace(chr(10), ' | ')[:60]}\n")
    if request.tools:
        if last.role == "tool":
            return "done"
        return Choice(text="", tool_calls=(ToolCall("p1", "pay", '{"amount": 5}'),))
    return "Hello Ann"
