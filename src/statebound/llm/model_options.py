"""The one rule for what a model option is: a secret, a transport setting, or part of the results.

- **secret**: an option named like a credential (``api_key``, ``key``, ``token``, ``auth_token``,
  ``password``, ``secret``, ``credentials``), or a value that is a URL with a password in it. A
  secret never reaches a store, a report, a trace or a message: stores keep its fingerprint
  (``secret:sha256:`` and 12 hex digits), so a resumed run can tell a rotated key from the same
  one without holding either; a URL keeps its host with the password masked.
- **transport**: how to reach the model, not what it answers: ``base_url``, ``timeout``,
  ``attempts``, ``transport``, ``retry``, ``cache`` (a replay returns what the model returned),
  ``n_threads`` (llama.cpp splits each product across threads, the sums are the same), ``price``
(what a token costs, not what the model answers), and every
  secret. These may change when a run is resumed; the run records what was used.
- **result**: every other option (``mode``, ``n_ctx``, ``n_batch``, ``chat_format``,
  ``completions``, ``grammar_field``, ``scoring``, ``grammar``, ``replies``, and any option of a
  plug-in backend): it can change what the model answers, so it is part of a run's identity.
  (``n_batch`` is one: llama.cpp picks other kernels for other batch sizes, which changes the
  floating-point sums slightly.)
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any, Literal

from statebound.llm.secrets import display_url, url_secrets

__all__ = [
    "TRANSPORT_OPTIONS",
    "OptionKind",
    "fingerprint",
    "option_kind",
    "redacted",
    "result_options",
    "secret_values",
    "transport_options",
]

OptionKind = Literal["secret", "transport", "result"]

TRANSPORT_OPTIONS = frozenset(
    {"base_url", "api_key", "timeout", "attempts", "transport", "retry", "cache", "n_threads", "price"}
)
_SECRET_NAME = re.compile(
    r"(?:^|_)(?:api_?key|key|token|secret|password|passwd|credentials?)$", re.IGNORECASE
)
_FINGERPRINT = "secret:sha256:"


def fingerprint(value: str) -> str:
    """A stand-in for a secret that tells two secrets apart without revealing either."""
    if value.startswith(_FINGERPRINT):  # already one (read back from a store)
        return value
    return _FINGERPRINT + hashlib.sha256(value.encode()).hexdigest()[:12]


def option_kind(name: str, value: object = None) -> OptionKind:
    """What the model option ``name`` (with ``value``) is; see the module's docstring."""
    if _SECRET_NAME.search(name) or (isinstance(value, str) and url_secrets(value)):
        return "secret"
    return "transport" if name in TRANSPORT_OPTIONS else "result"


def _redact(name: str, value: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: _redact(str(key), item) for key, item in value.items()}
    if not isinstance(value, str) or option_kind(name, value) != "secret":
        return value
    return display_url(value) if url_secrets(value) else fingerprint(value)


def redacted(options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` safe to store or print: secrets as fingerprints, URL passwords masked."""
    return {name: _redact(name, value) for name, value in options.items()}


def result_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """The options that can change what the model answers (part of a run's identity)."""
    return {name: value for name, value in redacted(options).items() if option_kind(name, value) == "result"}


def transport_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """The options that only say how to reach the model (secrets included, redacted)."""
    return {name: value for name, value in redacted(options).items() if option_kind(name, value) != "result"}


def secret_values(options: Mapping[str, Any]) -> tuple[str, ...]:
    """The secrets among ``options``' values, to mask wherever text might echo them."""
    found: list[str] = []
    for name, value in options.items():
        if isinstance(value, Mapping):
            found += secret_values({str(k): v for k, v in value.items()})
        elif isinstance(value, str) and option_kind(name, value) == "secret":
            found += url_secrets(value) or (value,)
    return tuple(found)
