"""MCP servers a flow may use: declared in Python (:class:`MCPServer`) or read from a config file
in the ``mcpServers`` JSON shape that MCP clients share (:func:`load_servers`)::

    {"mcpServers": {
        "filesystem": {"command": "npx", "args": ["@modelcontextprotocol/server-filesystem", "/data"]},
        "tickets": {"url": "https://tickets.example/mcp", "headers": {"Authorization": "Bearer ${TICKETS_TOKEN}"},
                    "allow": ["search", "show"], "timeout": 20}
    }}

A server is a command run over stdio (``command``, ``args``, ``env``, ``cwd``) or a streamable-HTTP
``url`` with ``headers``. ``${NAME}`` in a value is taken from the environment, so a secret need
not be written in the file. statebound's own keys: ``allow`` (the tools the flow may use; the
others are never offered or called), ``timeout`` (seconds a call may take), ``maxResultChars``
(the longest result text kept; a longer one is cut, and says so) and ``startupTimeout``.
The values of ``env`` and ``headers`` are treated as secrets: never shown, and masked wherever a
server's output, error or listing would show them.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from statebound.errors import DefinitionError
from statebound.llm.secrets import redact

__all__ = ["MCPServer", "load_servers", "parse_servers"]

_KEYS = {"command", "args", "env", "cwd", "url", "headers", "type", "allow", "timeout", "maxResultChars",
         "startupTimeout"}
_TYPES = ("stdio", "http", "streamable-http", "streamableHttp")


@dataclass(frozen=True, kw_only=True, eq=False)
class MCPServer:
    """One MCP server: a ``command`` run over stdio, or a streamable-HTTP ``url``.

    ``allow`` lists the tools a flow may use (None: all it lists); ``timeout`` bounds each call
    (seconds; a server that does not answer in time is stopped and the call fails, saying so);
    ``max_result_chars`` bounds the text a call's result puts into the history; ``startup_timeout``
    bounds starting the server and listing its tools."""

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict, repr=False)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    allow: tuple[str, ...] | None = None
    timeout: float = 60.0
    max_result_chars: int = 20_000
    startup_timeout: float = 60.0

    def __post_init__(self) -> None:
        where = f"MCP server {self.name!r}"
        if (self.command is None) == (self.url is None):
            raise DefinitionError(f"{where}: give a command (a server run over stdio) or a url (streamable HTTP), "
                                  "one of the two")
        if self.url is not None and not re.match(r"https?://", self.url):
            raise DefinitionError(f"{where}: url {redact(self.url)!r} is not an http:// or https:// URL")
        if isinstance(self.args, str) or (self.allow is not None and isinstance(self.allow, str)):
            raise DefinitionError(f"{where}: args and allow are lists of strings, not one string")
        object.__setattr__(self, "args", tuple(self.args))
        if self.allow is not None:
            object.__setattr__(self, "allow", tuple(self.allow))
        for label, value in (("timeout", self.timeout), ("startup_timeout", self.startup_timeout),
                             ("max_result_chars", self.max_result_chars)):
            if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
                raise DefinitionError(f"{where}: {label} is a positive number, not {value!r}")

    @classmethod
    def stdio(cls, name: str, command: str, *args: str, **options: Any) -> MCPServer:
        """A server run as ``command args...``, spoken to over its stdin and stdout."""
        return cls(name=name, command=command, args=args, **options)

    @classmethod
    def http(cls, name: str, url: str, **options: Any) -> MCPServer:
        """A server at a streamable-HTTP ``url`` (``headers=`` for its credentials)."""
        return cls(name=name, url=url, **options)

    @property
    def secrets(self) -> tuple[str, ...]:
        """The values to mask wherever this server's words are shown (its env and headers)."""
        return tuple(v for v in (*self.env.values(), *self.headers.values()) if v)

    def redact(self, text: str) -> str:
        """``text`` with this server's secrets masked."""
        return redact(text, *self.secrets)

    def __repr__(self) -> str:
        where = f"command={' '.join((self.command or '', *self.args))!r}" if self.command else f"url={redact(self.url or '')!r}"
        return f"MCPServer(name={self.name!r}, {where})"


def load_servers(path: str | Path) -> dict[str, MCPServer]:
    """The servers a config file declares (``{"mcpServers": {name: {...}}}``), by name."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise DefinitionError(f"cannot read the MCP config {path}: {error.strerror or error}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise DefinitionError(f"{path} is not JSON (line {error.lineno}, column {error.colno}: {error.msg})") from None
    return parse_servers(data, where=str(path))


def parse_servers(data: Any, *, where: str = "the MCP config", environ: Mapping[str, str] | None = None
                  ) -> dict[str, MCPServer]:
    """The servers ``data`` (a config file's JSON) declares, by name."""
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise DefinitionError(f"{where} has no \"mcpServers\" object: write {{\"mcpServers\": {{\"NAME\": "
                              "{\"command\": ..., \"args\": [...]}}}}")
    environ = os.environ if environ is None else environ
    return {name: _server(name, entry, f"{where}: server {name!r}", environ) for name, entry in servers.items()}


def _server(name: str, entry: Any, where: str, environ: Mapping[str, str]) -> MCPServer:
    if not isinstance(entry, dict):
        raise DefinitionError(f"{where} is not an object with a command or a url")
    if unknown := sorted(set(entry) - _KEYS):
        raise DefinitionError(f"{where}: unknown key {unknown[0]!r}; the keys are {', '.join(sorted(_KEYS))}")
    kind = entry.get("type")
    if kind is not None and kind not in _TYPES:
        raise DefinitionError(f"{where}: type {kind!r} is not one statebound speaks ({', '.join(_TYPES)}); an "
                              "SSE-only server is not supported")

    def text(key: str) -> str | None:
        value = entry.get(key)
        if value is not None and not isinstance(value, str):
            raise DefinitionError(f"{where}: {key} is a string, not {type(value).__name__}")
        return None if value is None else _expand(value, f"{where}: {key}", environ)

    def texts(key: str) -> tuple[str, ...] | None:
        value = entry.get(key)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise DefinitionError(f"{where}: {key} is a list of strings")
        return tuple(_expand(item, f"{where}: {key}", environ) for item in value)

    def table(key: str) -> dict[str, str]:
        value = entry.get(key) or {}
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise DefinitionError(f"{where}: {key} is an object of strings")
        return {k: _expand(v, f"{where}: {key}.{k}", environ) for k, v in value.items()}

    numbers = {option: entry[key] for key, option in (("timeout", "timeout"), ("maxResultChars", "max_result_chars"),
                                                      ("startupTimeout", "startup_timeout")) if key in entry}
    return MCPServer(name=name, command=text("command"), args=texts("args") or (), env=table("env"), cwd=text("cwd"),
                     url=text("url"), headers=table("headers"), allow=texts("allow"), **numbers)


_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _expand(value: str, where: str, environ: Mapping[str, str]) -> str:
    """``value`` with each ``${NAME}`` replaced by the environment variable's value."""

    def variable(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in environ:
            raise DefinitionError(f"{where} uses ${{{name}}}, and the environment has no {name}: set it "
                                  "before running the flow")
        return environ[name]

    return _VARIABLE.sub(variable, value)


def allowed(server: MCPServer, names: Sequence[str]) -> list[str]:
    """Of ``names`` (tools the server lists), those its ``allow`` list lets a flow use."""
    return [name for name in names if server.allow is None or name in server.allow]
