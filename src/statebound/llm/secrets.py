"""Keep API keys, URL tokens and database passwords out of logs, tracebacks, messages and reprs."""

from __future__ import annotations

import re

__all__ = ["MIN_FRAGMENT", "Secret", "display_url", "redact", "url_password", "url_secrets"]

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
    """``text`` with the secrets masked by value, whatever surrounds them.

    Masked: each secret and every fragment of it of :data:`MIN_FRAGMENT`+ characters (a server may
    echo a key partly, with or without its ``sk-`` prefix: "Incorrect API key provided: abc1...");
    URL passwords (``postgresql://u:pw@h``); secret query parameters (``?token=``, ``&api_key=``,
    ``?password=``); ``password=`` in libpq connection strings (``host=h password=pw``).
    """
    ranges = sorted(r for secret in secrets for r in _fragment_spans(text, secret))
    for start, end in reversed(_merged(ranges)):
        text = text[:start] + _MASK + text[end:]
    text = _URL_PASSWORD.sub(lambda m: m.group(1) + _MASK + "@", text)
    text = _QUERY_SECRET.sub(lambda m: m.group(1) + _MASK, text)
    return _LIBPQ_PASSWORD.sub(lambda m: m.group(1) + _MASK, text)


MIN_FRAGMENT = 8  # characters of a key that identify it (shorter ones may occur by chance)
# a vendor prefix shared by many keys ("sk-", "sk-proj-"): not a secret by itself
_VENDOR_PREFIX = re.compile(r"^[A-Za-z]{1,8}(?:[-_][A-Za-z]{1,8})*[-_]")
_SECRET_NAMES = r"(?:api[_-]?key|apikey|key|token|access[_-]?token|auth|password|passwd|pwd|secret|client[_-]?secret|sig|signature)"
_QUERY_SECRET = re.compile(rf"([?&;]{_SECRET_NAMES}=)[^&#\s'\"]+", re.IGNORECASE)
_URL_PASSWORD = re.compile(r"(\b[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*:)[^@\s/]+@")
_LIBPQ_PASSWORD = re.compile(r"((?:^|[\s'\"])password\s*=\s*)('[^']*'|[^\s'\"]+)", re.IGNORECASE)


def _fragment_spans(text: str, secret: Secret | str | None) -> list[tuple[int, int]]:
    """Where ``text`` holds ``secret`` or a fragment of it of MIN_FRAGMENT+ characters."""
    value = secret.reveal() if isinstance(secret, Secret) else secret
    if not value or len(value) < 4:
        return []
    if len(value) < MIN_FRAGMENT:  # too short for fragments: the whole value only
        return [(m.start(), m.end()) for m in re.finditer(re.escape(value), text)]
    prefix = _VENDOR_PREFIX.match(value)
    first = prefix.end() if prefix and len(value) - prefix.end() >= MIN_FRAGMENT else 0
    grams = {value[i : i + MIN_FRAGMENT] for i in range(first, len(value) - MIN_FRAGMENT + 1)}
    anywhere = re.compile("(?=(" + "|".join(map(re.escape, sorted(grams))) + "))")
    return [(m.start(), m.start() + MIN_FRAGMENT) for m in anywhere.finditer(text)]


def _merged(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in ranges:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def display_url(url: str) -> str:
    """``url`` without the password of its user part nor secret query parameters
    (``https://user:***@host/v1?token=***``): safe to print."""
    return redact(url)


def url_password(url: str) -> str | None:
    """The password in ``url``'s user part, if it has one."""
    scheme, sep, rest = url.partition("://")
    user, at, _ = rest.partition("/")[0].rpartition("@")
    return user.partition(":")[2] or None if sep and at else None


def url_secrets(url: str) -> tuple[str, ...]:
    """The secrets ``url`` carries: its user part's password and secret query parameters."""
    found = [url_password(url) or ""]
    if "://" in url:
        query = url.partition("?")[2].partition("#")[0]
        for pair in re.split(r"[&;]", query):
            name, _, value = pair.partition("=")
            if value and re.fullmatch(_SECRET_NAMES, name, re.IGNORECASE):
                found.append(value)
    return tuple(v for v in found if v)
