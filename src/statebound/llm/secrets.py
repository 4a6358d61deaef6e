"""Keep API keys out of logs, tracebacks, exception messages and reprs."""

from __future__ import annotations

__all__ = ["Secret", "display_url", "redact", "url_password"]

_MASK = "***"


class Secret:
    """A string that never shows itself: ``str()``/``repr()`` print ``***``; ``reveal()`` returns it."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __bool__(self) -> bool:
        return bool(self._value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)

    def __repr__(self) -> str:
        return f"Secret({_MASK})" if self._value else "Secret('')"

    __str__ = __repr__

    def __reduce__(self) -> str:  # pickling would write the key to disk
        raise TypeError("a Secret cannot be pickled")


def redact(text: str, *secrets: Secret | str | None) -> str:
    """Replace every occurrence of each secret (and of its first 8+ characters) in ``text``.

    Servers sometimes echo a key back partially ("Incorrect API key provided: sk-abc1...");
    masking the long prefixes too keeps such echoes out.
    """
    for secret in secrets:
        value = secret.reveal() if isinstance(secret, Secret) else secret
        if not value or len(value) < 4:
            continue
        text = text.replace(value, _MASK)
        for length in range(len(value) - 1, 7, -1):
            if value[:length] in text:
                text = text.replace(value[:length], _MASK)
                break
    return text


def display_url(url: str) -> str:
    """``url`` without the password of its user part (``https://user:***@host/v1``): safe to print."""
    scheme, sep, rest = url.partition("://")
    authority, slash, path = rest.partition("/")
    user, at, host = authority.rpartition("@")
    if not sep or not at or ":" not in user:
        return url
    return f"{scheme}://{user.partition(':')[0]}:{_MASK}@{host}{slash}{path}"


def url_password(url: str) -> str | None:
    """The password in ``url``'s user part, if it has one."""
    scheme, sep, rest = url.partition("://")
    user, at, _ = rest.partition("/")[0].rpartition("@")
    return user.partition(":")[2] or None if sep and at else None
