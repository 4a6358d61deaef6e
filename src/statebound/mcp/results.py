"""An MCP tool's result as a :class:`~statebound.flow.ToolResult`: its text for the history, cut
to the server's bound (and saying so); images, audio, blobs and resource links as references
(their type, size and a SHA-256, or their URI), never their bytes; structured content as
``data["structured"]`` and, with ``into=``, written to a flow variable through the variables'
typed path. The server's secrets are masked in all of it."""

from __future__ import annotations

import base64
import hashlib
import json
from typing import TYPE_CHECKING, Any

from statebound.flow.tool_result import ToolResult
from statebound.mcp.servers import MCPServer

if TYPE_CHECKING:
    import mcp_types as types

__all__ = ["tool_result"]


def tool_result(server: MCPServer, tool: str, result: types.CallToolResult, *, into: str | None = None) -> ToolResult:
    """``result`` of ``server``'s ``tool`` as a :class:`ToolResult` (``ok``: not ``isError``)."""
    parts: list[str] = []
    references: list[dict[str, Any]] = []
    for block in result.content:
        text, reference = _block(block)
        parts.append(text)
        if reference is not None:
            references.append(reference)
    structured = _masked(result.structured_content, server) if result.structured_content is not None else None
    if structured is not None and not any(block.type == "text" for block in result.content):
        parts.append(json.dumps(structured, ensure_ascii=False))
    output, cut = _bounded(server.redact("\n".join(parts)), server)
    data: dict[str, Any] = {"mcp": {"server": server.name, "tool": tool}}
    if references:
        data["content"] = _masked(references, server)
    if cut:
        data["mcp"]["cut"] = cut
    if structured is not None:
        size = len(json.dumps(structured))
        if size > server.max_result_chars:  # kept out of the history's data, and said
            data["mcp"]["structured_dropped"] = size
            structured = None
        else:
            data["structured"] = structured
    update = {into: structured} if into is not None and structured is not None and not result.is_error else None
    return ToolResult(output, ok=not result.is_error, data=data, update=update)


def _block(block: types.ContentBlock) -> tuple[str, dict[str, Any] | None]:
    """A content block's text for the history, and its reference when it is not text."""
    kind = block.type
    if kind == "text":
        return block.text, None  # type: ignore[union-attr]
    if kind in ("image", "audio"):
        raw = _decoded(block.data)  # type: ignore[union-attr]
        mime, digest = block.mime_type, hashlib.sha256(raw).hexdigest()  # type: ignore[union-attr]
        return (f"[{kind} {mime}, {len(raw)} bytes, sha256 {digest[:12]}]",
                {"type": kind, "mimeType": mime, "bytes": len(raw), "sha256": digest})
    if kind == "resource_link":
        uri, name = str(block.uri), block.name  # type: ignore[union-attr]
        return f"[resource {uri} ({name})]", {"type": kind, "uri": uri, "name": name,
                                              "mimeType": block.mime_type}  # type: ignore[union-attr]
    if kind == "resource":
        contents = block.resource  # type: ignore[union-attr]
        uri = str(contents.uri)
        text = getattr(contents, "text", None)
        if text is not None:
            return f"[resource {uri}]\n{text}", {"type": kind, "uri": uri, "mimeType": contents.mime_type}
        raw = _decoded(getattr(contents, "blob", ""))
        reference = {"type": kind, "uri": uri, "mimeType": contents.mime_type, "bytes": len(raw),
                     "sha256": hashlib.sha256(raw).hexdigest()}
        return f"[resource {uri}, {len(raw)} bytes]", reference
    return f"[{kind} content]", {"type": kind}


def _decoded(data: str) -> bytes:
    try:
        return base64.b64decode(data, validate=False)
    except ValueError:
        return data.encode()


def _bounded(text: str, server: MCPServer) -> tuple[str, int]:
    """``text`` cut to the server's bound, saying so (and the length it had: 0 when not cut)."""
    limit = server.max_result_chars
    if len(text) <= limit:
        return text, 0
    return (f"{text[:limit]}\n[cut: the result had {len(text)} characters; MCP server {server.name!r} keeps "
            f"{limit} (max_result_chars)]"), len(text)


def _masked(value: Any, server: MCPServer) -> Any:
    """``value`` (JSON) with the server's secrets masked in every string."""
    if isinstance(value, str):
        return server.redact(value)
    if isinstance(value, list):
        return [_masked(item, server) for item in value]
    if isinstance(value, dict):
        return {key: _masked(item, server) for key, item in value.items()}
    return value
