"""Exception types, split by who has to act on them; :func:`did_you_mean` for their messages."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`` Did you mean 'x'?`` when ``name`` is close to one of ``known``, else ``""``."""
    close = difflib.get_close_matches(name, list(known), n=1)
    return f" Did you mean {close[0]!r}?" if close else ""


class StateboundError(Exception):
    """Base class of every error statebound raises on purpose.

    Pickled whole, with its message and attributes (a Ray worker sends it to the driver), whatever
    its ``__init__`` takes: the default pickling would call ``__init__`` with the message alone."""

    def __reduce__(self) -> tuple[Any, ...]:
        return _restore, (type(self), self.args, self.__dict__)


def _restore(kind: type[StateboundError], args: tuple[Any, ...], attributes: dict[str, Any]) -> StateboundError:
    error = kind.__new__(kind, *args)
    error.args = args
    error.__dict__.update(attributes)
    return error


class DefinitionError(StateboundError):
    """A flow, agent or configuration is built wrong; the developer must change the code."""


class SpecError(StateboundError):
    """A behaviour spec is malformed; the spec author must fix the text at ``line``:``column``."""

    def __init__(self, message: str, *, line: int, column: int, source_name: str = "<spec>") -> None:
        self.message = message
        self.line = line
        self.column = column
        self.source_name = source_name
        super().__init__(f"{source_name}:{line}:{column}: {message}")


class ProviderError(StateboundError):
    """An LLM provider failed and retries did not help (timeouts, 429, 5xx, malformed replies)."""

    def __init__(self, message: str, *, provider: str, attempts: int = 1) -> None:
        self.message = message
        self.provider = provider
        self.attempts = attempts
        super().__init__(f"{provider}: {message} (after {attempts} attempt{'s' if attempts != 1 else ''})")


class ContextOverflow(ProviderError):
    """The request does not fit the model's context window (never retried: it would not fit again).

    Agents that keep a growing transcript catch it and send a shorter one."""


class ProviderTimeout(ProviderError):
    """The server did not reply within the timeout (retried first): it is overloaded, or the
    timeout is too short for the request."""


class ProviderDisconnected(ProviderError):
    """The server closed or reset the connection before or during its reply (retried first)."""


class FatalProviderError(ProviderError):
    """Every further request would fail alike, so a benchmark run stops at once instead of
    spending a request per episode: the key is refused (HTTP 401), it has no access (403), the
    model or the URL is unknown (404), or the server cannot be reached at all."""


class ProviderUnreachable(FatalProviderError):
    """No connection could be made, after retries (base class of the three causes below)."""


class ProviderConnectionRefused(ProviderUnreachable):
    """Nothing listens at the address: the server is not running, or the port is wrong."""


class ProviderHostNotFound(ProviderUnreachable):
    """The host name in the URL does not resolve (DNS)."""


class ProviderTLSError(ProviderUnreachable):
    """The TLS handshake failed: an ``https://`` URL for a plain-HTTP server, or a certificate
    that is not trusted."""


class UnsupportedFeature(StateboundError):
    """A backend was asked for something it cannot do (e.g. a grammar on a remote chat model)."""


class ModelOutputError(StateboundError):
    """Model output broke a rule and could not be corrected (the monitor or a parser gave up)."""


class StructuredOutputError(ModelOutputError):
    """A reply asked for in a JSON schema did not fit it, after every retry (``completion``: the
    last reply)."""

    completion: Any = None


class EnvironmentUnavailable(StateboundError):
    """An environment cannot start (database not reachable, sandbox missing); the message names the fix."""


class CheckpointError(StateboundError):
    """A flow's checkpoint store cannot be used as asked: damaged or unreachable, or a thread that
    does not fit the request (another flow, another task, no such thread); the message names the
    thread, checkpoint or server, and the fix."""


class ThreadTaken(CheckpointError):
    """Another run of a stored thread holds it or wrote into it first: this one stops without
    writing into it."""


class BudgetExceeded(StateboundError):
    """A token, turn or time budget ran out."""


class ModelUnavailable(DefinitionError):
    """A model cannot be opened (unknown name, missing package or file); the message names the fix."""


class MCPServerError(StateboundError):
    """An MCP server did not start, did not answer, crashed or broke the protocol. ``server`` names
    it; ``stderr`` is the end of what it wrote to its standard error (a stdio server), secrets
    redacted."""

    def __init__(self, message: str, *, server: str, stderr: str = "") -> None:
        self.server = server
        self.stderr = stderr
        tail = f"; its stderr ended with:\n{stderr}" if stderr.strip() else ""
        super().__init__(f"MCP server {server!r}: {message}{tail}")


class MCPServerTimeout(MCPServerError):
    """An MCP server did not answer a call within its timeout; it was stopped (the next call starts
    it again)."""
