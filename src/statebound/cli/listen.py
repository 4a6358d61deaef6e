"""The listening socket of statebound's local servers (``view``, ``serve``)."""

from __future__ import annotations

import socket

from statebound.cli.errors import fail

__all__ = ["LOCAL", "bind"]

LOCAL = frozenset({"127.0.0.1", "localhost", "::1"})


def bind(host: str, port: int, *, shared: bool = False, listen: bool = True) -> socket.socket:
    """A socket on ``host:port`` (port 0: a free one), or the one-line error. ``shared``: with
    SO_REUSEPORT, so several workers each listen on their own and the system spreads connections;
    ``listen=False``: the port held, not served. Accepted connections send at once (TCP_NODELAY:
    without it a reply's second write waits for the client's delayed acknowledgement, 40 ms)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # accepted sockets inherit it
    if shared:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        sock.bind((host, port))
    except OSError as error:
        sock.close()
        fail(f"cannot serve on {host}:{port}: {error.strerror or error}; choose another --port or --host")
    if listen:
        sock.listen(2048)
    return sock
