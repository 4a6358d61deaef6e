"""Model settings from flags, the environment, or one config file (first found wins, in that order).

The config file is ``$STATEBOUND_CONFIG`` if set, else ``$XDG_CONFIG_HOME/statebound/config.toml``
(``~/.config/statebound/config.toml``)::

    model = "openai:gpt-4o-mini"        # default model when none is named

    [openai]
    base_url = "http://127.0.0.1:8080/v1"
    api_key = "sk-..."
    timeout = 60                        # seconds per request
    attempts = 4                        # tries per request, the first included
    transport = "aiohttp"               # HTTP client: "aiohttp" (default when installed) or "httpx"

    [prices]                            # USD per million prompt, completion tokens
    "openai:local" = "free"
    "openai:my-finetune" = [0.3, 1.2]

Environment: ``STATEBOUND_MODEL``, ``OPENAI_BASE_URL``, ``OPENAI_API_KEY``,
``STATEBOUND_OPENAI_MODEL`` (model for a bare ``openai``), ``STATEBOUND_TIMEOUT``,
``STATEBOUND_ATTEMPTS``, ``STATEBOUND_HTTP_TRANSPORT``. A key or table the file does not know (a
typo such as ``attemps`` or ``[opneai]``) is an error naming the closest known one: a setting
silently ignored could send a key to the wrong server.
"""

from __future__ import annotations

import difflib
import os
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from statebound.errors import DefinitionError, ModelUnavailable
from statebound.llm.secrets import Secret, display_url

__all__ = [
    "DEFAULT_MODEL",
    "OpenAISettings",
    "Transport",
    "config_path",
    "default_model",
    "load_config",
    "resolve_openai_settings",
]

DEFAULT_MODEL = "smollm2"
OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"
LOCAL_PLACEHOLDER_KEY = "not-needed"  # local servers ignore the key, but the SDK insists on one
Transport = Literal["aiohttp", "httpx"]  # the HTTP client under the SDK


def config_path() -> Path:
    """Where statebound looks for its config file."""
    if explicit := os.environ.get("STATEBOUND_CONFIG"):
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(base) / "statebound" / "config.toml"


def load_config(path: Path | None = None) -> dict[str, Any]:
    """The parsed config file, or ``{}`` when there is none."""
    path = path or config_path()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as error:
        raise DefinitionError(f"cannot read config file {path}: {error.strerror}") from None
    except UnicodeDecodeError as error:
        raise DefinitionError(f"config file {path} is not UTF-8 text (byte {error.start} cannot be read); "
                              "save it as UTF-8") from None
    try:
        config = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise DefinitionError(f"config file {path} is not valid TOML: {error}") from None
    _check_keys(config, path)
    return config


# What the config file may hold: top-level keys, and tables with their keys.
_TOP_KEYS = ("model",)
_TABLES = {"openai": ("model", "base_url", "api_key", "timeout", "attempts", "transport")}
_NUMBERS = {"timeout": "a number of seconds (timeout = 60)", "attempts": "a whole number (attempts = 4)"}


def _check_keys(config: dict[str, Any], path: Path) -> None:
    """Refuse keys and tables the file cannot hold, naming the closest known one."""
    where = f"config file {path}"
    for key, value in config.items():
        if key == "prices" and isinstance(value, dict):  # any model name, each value a price
            from statebound.llm.pricing import parse_price

            for model, price in value.items():
                parse_price(price, where=f"{where}: [prices] {model!r}")
        elif key in _TABLES:
            if not isinstance(value, dict):
                raise DefinitionError(f"{where}: {key} must be a table ([{key}] on a line of its own)")
            for name, item in value.items():
                if name not in _TABLES[key]:
                    raise DefinitionError(f"{where}: unknown key {name!r} in [{key}]"
                                          f"{_closest(name, _TABLES[key])}; [{key}] takes {', '.join(_TABLES[key])}")
                _check_type(f"{where}: {name} in [{key}]", name, item)
        elif key not in _TOP_KEYS or isinstance(value, dict):
            known = [*_TOP_KEYS, *(f"[{table}]" for table in _TABLES), "[prices]"]
            shown = f"[{key}]" if isinstance(value, dict) else key
            candidates = {name: name for name in known} | {  # a table's key written at the top
                name: f"{name} under [{table}]" for table, names in _TABLES.items() for name in names
                if name not in _TOP_KEYS}
            raise DefinitionError(f"{where}: unknown {'table' if isinstance(value, dict) else 'key'} "
                                  f"{shown}{_closest(shown, candidates)}; the file takes {', '.join(known)}")
        elif not isinstance(value, str):
            raise DefinitionError(f"{where}: {key} must be a string (e.g. {key} = \"smollm2\"), got {value!r}")


def _check_type(where: str, name: str, value: Any) -> None:
    """A table key's value is a string, or a number for ``timeout`` and ``attempts`` (the value
    is not shown: it may be a key)."""
    if name in _NUMBERS:
        wrong = isinstance(value, bool) or not isinstance(value, int | float) or (
            name == "attempts" and not isinstance(value, int))
        if wrong:
            raise DefinitionError(f"{where} must be {_NUMBERS[name]}, got a {_toml_type(value)}")
    elif not isinstance(value, str):
        raise DefinitionError(f"{where} must be a string ({name} = \"...\"), got a {_toml_type(value)}")


def _toml_type(value: Any) -> str:
    return {list: "list", dict: "table", bool: "boolean", int: "number", float: "number",
            str: "string"}.get(type(value), type(value).__name__)


def _closest(name: str, known: Sequence[str] | Mapping[str, str]) -> str:
    """`` (did you mean X?)`` for the known name closest to ``name`` (a mapping: name -> as shown)."""
    close = difflib.get_close_matches(name, list(known), n=1)
    shown = known[close[0]] if close and isinstance(known, Mapping) else close[0] if close else None
    return f" (did you mean {shown}?)" if shown else ""


def default_model(config: dict[str, Any] | None = None) -> str:
    """The model to use when none is named: ``$STATEBOUND_MODEL``, the config's ``model``, smollm2."""
    config = load_config() if config is None else config
    return os.environ.get("STATEBOUND_MODEL") or str(config.get("model") or DEFAULT_MODEL)


@dataclass(frozen=True, slots=True, repr=False)
class OpenAISettings:
    """Resolved settings for an OpenAI-compatible endpoint (the key stays a :class:`Secret`, and
    the repr masks a password in the URL)."""

    model: str
    base_url: str
    api_key: Secret
    timeout: float
    attempts: int
    transport: Transport | None = None  # None: aiohttp when installed, else httpx

    @property
    def is_openai(self) -> bool:
        return "api.openai.com" in self.base_url

    def __repr__(self) -> str:
        return (f"OpenAISettings(model={self.model!r}, base_url={display_url(self.base_url)!r}, "
                f"api_key={self.api_key!r}, timeout={self.timeout!r}, attempts={self.attempts!r}, "
                f"transport={self.transport!r})")


def _number(value: Any, *, name: str, source: str, kind: type[int | float]) -> Any:
    try:
        number = kind(value)
    except (TypeError, ValueError):
        raise DefinitionError(f"{name} from {source} must be a number, got {value!r}") from None
    if number <= 0:
        raise DefinitionError(f"{name} from {source} must be positive, got {value!r}")
    return number


def _first(*candidates: tuple[object, str]) -> tuple[object, str] | tuple[None, None]:
    for value, source in candidates:
        if value not in (None, ""):
            return value, source
    return None, None


def resolve_openai_settings(
    *,
    model: str | None = None,
    base_url: str | None = None,
    api_key: str | Secret | None = None,
    timeout: float | None = None,
    attempts: int | None = None,
    transport: str | None = None,
    config: dict[str, Any] | None = None,
) -> OpenAISettings:
    """Merge flags (the arguments), the environment and the config file's ``[openai]`` table."""
    table = (load_config() if config is None else config).get("openai", {})
    env = os.environ
    file = f"config file {config_path()}"

    model_value, _ = _first(
        (model, "flag"), (env.get("STATEBOUND_OPENAI_MODEL"), "env"), (table.get("model"), file)
    )
    if not model_value:
        raise ModelUnavailable(
            "no OpenAI model named: use 'openai:MODEL' (e.g. openai:gpt-4o-mini), set "
            f"STATEBOUND_OPENAI_MODEL, or put model = \"...\" under [openai] in {config_path()}"
        )
    url_value, url_source = _first(
        (base_url, "flag"), (env.get("OPENAI_BASE_URL"), "env"), (table.get("base_url"), file)
    )
    url = str(url_value or OPENAI_DEFAULT_BASE_URL).rstrip("/")

    key_value, key_source = _first(
        (api_key, "flag"), (env.get("OPENAI_API_KEY"), "env"), (table.get("api_key"), file)
    )
    for name, value, source in (("base_url", url_value, url_source), ("api_key", key_value, key_source)):
        if value is not None and not isinstance(value, str | Secret):
            raise DefinitionError(f"{name} from {source} must be a string, got a {_toml_type(value)} "
                                  f"(--model-option {name}=TEXT)")
    if isinstance(key_value, Secret):
        key = key_value
    elif key_value:
        key = Secret(str(key_value))
    elif "api.openai.com" in url:
        raise ModelUnavailable(
            "no API key for api.openai.com: pass api_key=..., set OPENAI_API_KEY, or put "
            f"api_key = \"...\" under [openai] in {config_path()}"
        )
    else:
        key = Secret(LOCAL_PLACEHOLDER_KEY)

    timeout_value, timeout_source = _first(
        (timeout, "flag"), (env.get("STATEBOUND_TIMEOUT"), "STATEBOUND_TIMEOUT"),
        (table.get("timeout"), file),
    )
    attempts_value, attempts_source = _first(
        (attempts, "flag"), (env.get("STATEBOUND_ATTEMPTS"), "STATEBOUND_ATTEMPTS"),
        (table.get("attempts"), file),
    )
    transport_value, transport_source = _first(
        (transport, "flag"),
        (env.get("STATEBOUND_HTTP_TRANSPORT"), "STATEBOUND_HTTP_TRANSPORT"),
        (table.get("transport"), file),
    )
    if transport_value is not None and transport_value not in get_args(Transport):
        raise DefinitionError(
            f"transport from {transport_source} must be \"aiohttp\" or \"httpx\", "
            f"got {transport_value!r}"
        )
    return OpenAISettings(
        model=str(model_value),
        base_url=url,
        api_key=key,
        timeout=60.0 if timeout_value is None
        else _number(timeout_value, name="timeout", source=str(timeout_source), kind=float),
        attempts=4 if attempts_value is None
        else _number(attempts_value, name="attempts", source=str(attempts_source), kind=int),
        transport=transport_value,  # type: ignore[arg-type]  # checked above
    )
