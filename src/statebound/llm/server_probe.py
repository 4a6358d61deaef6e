"""Which server is behind an OpenAI-compatible ``base_url``: a few cheap requests on first use.

``GET /v1/models`` names who owns the models (``me``: llama-cpp-python, ``llamacpp``: llama.cpp's
``llama-server``, ``vllm``, ``sglang``, ``library``: Ollama, ``openai``/``system``: OpenAI), and
one endpoint only that server has confirms it (``/extras/tokenize``, ``/props``, ``/version``,
``/get_model_info``, ``/api/version``). A probe that fails (nothing answers, an answer that is not
JSON) falls back to the plain OpenAI profile and says why; :class:`Detection` keeps how the
profile was established, for ``statebound models --probe`` and for messages.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from statebound.llm.config import OpenAISettings
from statebound.llm.secrets import display_url, redact, url_password
from statebound.llm.server_profiles import PROFILES, ServerProfile

__all__ = ["Detection", "probe", "server_root"]

log = logging.getLogger("statebound.llm.servers")
PROBE_TIMEOUT = 5.0  # seconds per probe request (a server that answers at all answers these at once)


@dataclass(frozen=True, slots=True)
class Detection:
    """The profile found for a server, how it was found, and what the probe learnt on the way:
    ``model_ids`` (from ``/v1/models``), ``props`` (llama-server's ``/props``); ``fallback`` says
    why the plain profile was taken when the probe could not tell."""

    profile: ServerProfile
    how: str
    model_ids: tuple[str, ...] = ()
    props: Mapping[str, Any] = field(default_factory=dict)
    fallback: str | None = None
    transient: bool = False  # nothing answered: probe again next time


def server_root(base_url: str) -> str:
    """The server's own root (``base_url`` without its ``/v1``), where the non-OpenAI endpoints are."""
    url = base_url.rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url


_OWNERS = {"me": "llama-cpp-python", "llamacpp": "llama-server", "vllm": "vllm", "sglang": "sglang",
           "library": "ollama", "ollama": "ollama", "openai": "openai", "system": "openai",
           "openai-internal": "openai"}


def probe(settings: OpenAISettings, *, timeout: float = PROBE_TIMEOUT) -> Detection:
    """Find the profile of the server ``settings`` name (see the module docstring)."""
    if settings.is_openai:
        return Detection(PROFILES["openai"], "the base_url is api.openai.com")
    import httpx

    secrets = (settings.api_key, url_password(settings.base_url))
    headers = {"Authorization": f"Bearer {settings.api_key.reveal()}"}
    try:
        with httpx.Client(timeout=min(timeout, settings.timeout), headers=headers) as client:
            return _detect(client, settings.base_url)
    except httpx.TransportError as error:  # nothing answered: the request that follows says why
        reason = redact(f"{type(error).__name__}: {error}", *secrets)
        return Detection(PROFILES["openai"], f"the probe failed ({reason}): the plain OpenAI profile",
                         fallback=reason, transient=True)
    except (httpx.HTTPError, ValueError) as error:
        reason = redact(f"{type(error).__name__}: {error}", *secrets)
        return _fallback(settings.base_url, f"the probe failed ({reason})")


def _detect(client: Any, base_url: str) -> Detection:
    root = server_root(base_url)
    listing = client.get(f"{base_url.rstrip('/')}/models")
    if listing.status_code != 200:
        return _fallback(base_url, f"GET /v1/models answered HTTP {listing.status_code}")
    data = listing.json().get("data") if isinstance(listing.json(), dict) else None
    models = [m for m in data if isinstance(m, dict)] if isinstance(data, list) else []
    ids = tuple(str(m.get("id")) for m in models if m.get("id") is not None)
    owners = sorted({str(m.get("owned_by")) for m in models if m.get("owned_by")})
    said = f"GET /v1/models: owned_by {', '.join(map(repr, owners)) or 'none'}"
    claimed = {_OWNERS[o] for o in owners if o in _OWNERS}
    checks: dict[str, Callable[[], str | None]] = {
        "llama-cpp-python": lambda: _answers(client, "POST", f"{root}/extras/tokenize", {"input": "a"}, "tokens"),
        "llama-server": lambda: _answers(client, "GET", f"{root}/props", None, "default_generation_settings"),
        "vllm": lambda: _vllm(client, root),
        "sglang": lambda: _answers(client, "GET", f"{root}/get_model_info", None, "model_path"),
        "ollama": lambda: _answers(client, "GET", f"{root}/api/version", None, "version"),
    }
    if claimed == {"openai"}:
        return Detection(PROFILES["openai"], said, ids)
    for name in [*sorted(claimed & checks.keys()), *(n for n in checks if n not in claimed)]:
        confirmed = checks[name]()
        if confirmed is not None:
            props = client.get(f"{root}/props").json() if name == "llama-server" else {}
            return Detection(PROFILES[name], f"{said}; {confirmed}", ids, props)
    return _fallback(base_url, f"{said}, and no endpoint of a known server answered", ids)


def _answers(client: Any, method: str, url: str, body: object, key: str) -> str | None:
    """``"<METHOD> <path> answered"`` when ``url`` answers JSON holding ``key``, else None."""
    reply = client.request(method, url, json=body) if body is not None else client.request(method, url)
    if reply.status_code != 200:
        return None
    try:
        found = reply.json()
    except ValueError:
        return None
    path = url.split("//", 1)[-1].partition("/")[2]
    return f"{method} /{path} answered" if isinstance(found, dict) and key in found else None


def _vllm(client: Any, root: str) -> str | None:
    """vLLM's ``/version`` (``{"version": ...}``) beside its ``/tokenize``: Ollama and SGLang have
    neither pair."""
    version = _answers(client, "GET", f"{root}/version", None, "version")
    return None if version is None else f"{version} ({client.get(f'{root}/version').json()['version']})"


def _fallback(base_url: str, reason: str, ids: tuple[str, ...] = ()) -> Detection:
    log.warning("openai-compatible %s: %s; taking the plain OpenAI profile (no grammar, no scoring); "
                "name the server with --model-option profile=NAME (%s)", display_url(base_url), reason,
                ", ".join(PROFILES))
    return Detection(PROFILES["openai"], f"{reason}: the plain OpenAI profile", ids, fallback=reason)
