"""OpenTelemetry traces of flow runs and benchmark runs, off until turned on.

::

    import statebound.telemetry
    statebound.telemetry.enable()  # OTLP over HTTP to $OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT

While on, every flow run is a span with a child per state visited, and below a state its LLM
calls, tool calls and picks (``docs/tracing.md``); ``statebound eval`` adds a run span with an
episode span per task. This module imports nothing of OpenTelemetry until :func:`enable` is
called (the ``otel`` extra).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from statebound.telemetry.tracing import Tracing

__all__ = ["CONTENT_VARIABLE", "ENDPOINT_VARIABLES", "active", "disable", "enable", "enable_from_env"]

# Setting either turns tracing on for the CLI (the OTLP exporter reads them itself).
ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
# The GenAI conventions' opt-in for prompts, replies, tool arguments and results on spans.
CONTENT_VARIABLE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"


def content_from_env() -> bool:
    """Whether :data:`CONTENT_VARIABLE` asks for content (``true``, ``1``)."""
    return os.environ.get(CONTENT_VARIABLE, "").strip().lower() in ("true", "1", "yes")

_active: Tracing | None = None


def active() -> Tracing | None:
    """The tracing in force, or None while tracing is off."""
    return _active


def enable(provider: Any = None, *, content: bool | None = None, secrets: tuple[str, ...] = ()) -> Tracing:
    """Turn tracing on (again: the same one). Spans go to ``provider`` (an SDK ``TracerProvider``)
    or, by default, to a new one exporting over OTLP/HTTP to the endpoint the standard
    ``OTEL_EXPORTER_OTLP_*`` variables name (``http://localhost:4318`` without them), flushed at
    exit. ``content`` (default: :data:`CONTENT_VARIABLE`) puts prompts, replies, tool arguments
    and results on the spans, with ``secrets`` (and every API key a model holds) masked by value.
    Needs the ``otel`` extra."""
    global _active
    if _active is None:
        try:
            from statebound.telemetry.tracing import Tracing
        except ImportError as error:
            raise ImportError("tracing needs the otel extra: pip install 'statebound[otel]'") from error
        _active = Tracing.start(provider, content=content_from_env() if content is None else content)
    _active.secrets.update(secret for secret in secrets if secret)
    return _active


def enable_from_env(force: bool = False, *, content: bool = False, secrets: tuple[str, ...] = ()) -> Tracing | None:
    """Turn tracing on when ``force`` or ``content`` or an ``OTEL_EXPORTER_OTLP_*`` endpoint
    variable is set; with content when ``content`` or :data:`CONTENT_VARIABLE` asks for it."""
    if force or content or any(os.environ.get(name) for name in ENDPOINT_VARIABLES):
        return enable(content=content or content_from_env(), secrets=secrets)
    return _active


def disable() -> None:
    """Turn tracing off, sending the spans not sent yet."""
    global _active
    if _active is not None:
        _active.stop()
        _active = None
