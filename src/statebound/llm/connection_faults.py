"""Name the cause of a failed HTTP exchange, whichever client (aiohttp or httpx) sits under the SDK.

The SDK wraps every network failure in ``APIConnectionError`` or ``APITimeoutError``, and the
aiohttp transport reports a refused connection, a failed DNS lookup, a TLS failure and a dropped
connection all as timeouts. The real cause is further down the exception chain
(``__cause__``/``__context__``): :func:`connection_fault` reads it from there, so each cause gets
its own :class:`~statebound.errors.ProviderError` subclass and a message that says what to fix.
"""

from __future__ import annotations

import socket
import ssl
from collections.abc import Iterator

from statebound.errors import (
    ProviderConnectionRefused,
    ProviderDisconnected,
    ProviderError,
    ProviderHostNotFound,
    ProviderTimeout,
    ProviderTLSError,
)

__all__ = ["ConnectionFault", "connection_fault"]

ConnectionFault = tuple[type[ProviderError], str]

# The clients' own names for "the server closed the connection without a reply" and "the reply
# stopped short"; matched by name so that neither client needs importing.
_CLOSED_BEFORE_REPLY = frozenset({"ServerDisconnectedError", "RemoteProtocolError"})
_CUT_SHORT = frozenset({"ClientPayloadError", "ContentLengthError", "IncompleteRead"})


def _chain(error: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    link: BaseException | None = error
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        yield link
        link = link.__cause__ or link.__context__


def connection_fault(error: BaseException, *, where: str, timeout: float) -> ConnectionFault | None:
    """The error class and message for a network failure of a request to ``where`` (the server's
    address, credentials removed), or ``None`` when ``error`` is not one."""
    links = list(_chain(error))
    for link in links:
        if isinstance(link, ConnectionRefusedError):
            return ProviderConnectionRefused, (
                f"connection refused at {where}: nothing listens there; is the server running, "
                "and are the host and port in base_url right?")
        if isinstance(link, socket.gaierror):
            return ProviderHostNotFound, (
                f"host not found: the name in {where} does not resolve (DNS: {link.strerror}); "
                "check the host in base_url")
    if tls := [link for link in links if isinstance(link, ssl.SSLError | ssl.CertificateError)]:
        reason = next((r for link in reversed(tls) if (r := getattr(link, "reason", None))), type(tls[-1]).__name__)
        return ProviderTLSError, (
            f"TLS handshake with {where} failed ({reason}): an https:// URL for a plain-HTTP server "
            "(use http://), or a certificate not trusted here")
    names = {type(link).__name__ for link in links}
    if names & _CLOSED_BEFORE_REPLY:
        return ProviderDisconnected, f"{where} closed the connection before replying"
    if names & _CUT_SHORT:
        return ProviderDisconnected, f"the reply from {where} stopped short: the connection was reset during it"
    if any(isinstance(link, ConnectionResetError) for link in links):
        return ProviderDisconnected, f"the connection to {where} was reset before the reply was complete"
    if any(isinstance(link, TimeoutError) for link in links) or "Timeout" in " ".join(names):
        return ProviderTimeout, (
            f"no reply from {where} within {timeout:g} s (timeout); the server may be overloaded, "
            "or raise timeout=")
    return None
