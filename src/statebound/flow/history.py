"""The context history: what every output function appends to, and how it becomes chat messages.

Each :class:`Entry` records who said it (``role``), the text, the state it was produced in and its
``source``: the ``task``, an ``instruction`` (a prompter), an ``llm`` reply, a ``tool`` result or a
person's answer to a paused run (``human``, see :class:`~statebound.flow.human.AskHuman`).

Mapping to chat messages (:func:`to_messages`), used by :class:`~statebound.flow.CallLLM`:

* the flow's ``system`` prompt (plus the state's agent instruction, in the SF_Agent view) becomes
  the first ``system`` message; an agent instruction is never stored in the history;
* ``task``, ``instruction`` and ``human`` entries become ``user`` messages;
* ``llm`` entries become ``assistant`` messages;
* ``tool`` entries become ``user`` messages (the tool chooses its own wording, e.g.
  ``"Observation: ..."``);
* the calls a model asked for through ``CallLLM(tools=...)`` become an ``assistant`` message with
  ``tool_calls``, and each call's result a ``tool`` message answering it (backends without a tool
  API read them as text: :func:`~statebound.llm.base.flatten_tool_messages`);
* consecutive messages of the same role are merged (some chat templates require alternation).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import msgspec

from statebound.llm.base import Message, ToolCall, Usage

Source = Literal["task", "instruction", "llm", "tool", "human"]
EntryRole = Literal["system", "user", "assistant", "tool"]

__all__ = ["Entry", "EntryRole", "MessageCache", "Source", "to_messages"]

_CHAT_ROLE: dict[str, Literal["system", "user", "assistant"]] = {
    "system": "system",
    "user": "user",
    "assistant": "assistant",
    "tool": "user",
}


class Entry(msgspec.Struct, frozen=True):
    """One message of the context history.

    ``name`` is the tool or group-chat role that produced it (None otherwise); ``ok`` is a tool's
    success flag (None for other sources); ``usage`` is the LLM usage behind an ``llm`` entry;
    ``data`` is a tool's structured payload (never sent to an LLM).
    """

    role: EntryRole
    content: str
    state: str
    source: Source
    name: str | None = None
    ok: bool | None = None
    usage: Usage | None = None
    data: Any = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly view (``data`` is kept only when it is a plain JSON value)."""
        out: dict[str, Any] = {
            "role": self.role,
            "content": self.content,
            "state": self.state,
            "source": self.source,
        }
        if self.name is not None:
            out["name"] = self.name
        if self.ok is not None:
            out["ok"] = self.ok
        if self.usage is not None:
            out["usage"] = {
                "prompt_tokens": self.usage.prompt_tokens,
                "completion_tokens": self.usage.completion_tokens,
                "calls": self.usage.calls,
            }
        if isinstance(self.data, (str, int, float, bool, list, dict)):
            out["data"] = self.data
        return out


def system_text(system: str | None, instruction: str | None) -> str | None:
    """The system message for one LLM call: the flow's system prompt, then the agent's instruction."""
    if system and instruction:
        return f"{system}\n\n{instruction}"
    return system or instruction or None


def to_messages(
    history: Sequence[Entry], *, system: str | None = None, instruction: str | None = None
) -> tuple[Message, ...]:
    """Render the history as chat messages (see the module docstring for the mapping).

    ``instruction`` is an SF_Agent instruction: it is appended to the system message of this call
    only.
    """
    cache = MessageCache()
    return cache.render(history, system_text(system, instruction))


class MessageCache:
    """Renders a growing history incrementally (a run renders it before every LLM call).

    Same output as :func:`to_messages`; only entries added since the last call are converted.
    """

    __slots__ = ("_body", "_done")

    def __init__(self) -> None:
        self._body: list[Message] = []
        self._done = 0

    def render(self, history: Sequence[Entry], head: str | None) -> tuple[Message, ...]:
        body = self._body
        for i in range(self._done, len(history)):
            entry = history[i]
            native = None if entry.data is None else _tool_message(entry)
            if native is not None:
                body.append(native)
                continue
            role = _CHAT_ROLE[entry.role]
            if body and body[-1].role == role and not (body[-1].tool_calls or body[-1].tool_call_id):
                body[-1] = Message(role, body[-1].content + "\n\n" + entry.content)
            else:
                body.append(Message(role, entry.content))
        self._done = len(history)
        if not head:
            return tuple(body)
        if body and body[0].role == "system":
            return (Message("system", head + "\n\n" + body[0].content), *body[1:])
        return (Message("system", head), *body)


def _tool_message(entry: Entry) -> Message | None:
    """A model's tool calls (``data["tool_calls"]``) and a call's result (``data["tool_call"]``)
    as the provider's messages; None for any other entry."""
    data = entry.data
    if not isinstance(data, dict):
        return None
    if entry.source == "llm" and data.get("tool_calls"):
        calls = tuple(ToolCall(c["id"], c["name"], c["arguments"]) for c in data["tool_calls"])
        return Message("assistant", entry.content, tool_calls=calls)
    if entry.source == "tool" and isinstance(call := data.get("tool_call"), dict):
        return Message("tool", entry.content, tool_call_id=str(call["id"]))
    return None
