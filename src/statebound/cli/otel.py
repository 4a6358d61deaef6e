"""The ``--otel`` option ``statebound eval`` and ``run`` share: OpenTelemetry traces of the run."""

from __future__ import annotations

from typing import Any

import typer

from statebound.cli.errors import fail

__all__ = ["OTEL_HELP", "start_tracing"]

# Typer renders option help as Rich markup: "\\[" keeps "[otel]" from being read as a style tag.
OTEL_HELP = ("Send OpenTelemetry traces (spans per run, episode, state, model call, tool and pick) over OTLP/HTTP "
             "to OTEL_EXPORTER_OTLP_ENDPOINT (default http://localhost:4318); on without this flag when "
             "OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set. "
             "Needs pip install 'statebound\\[otel]'.")


def otel_option() -> Any:
    """The typer option (a fresh one per command)."""
    return typer.Option(False, "--otel", help=OTEL_HELP)


def start_tracing(otel: bool) -> None:
    """Turn tracing on when asked or when the environment names an OTLP endpoint; a missing
    extra is a one-line mistake."""
    from statebound import telemetry

    try:
        telemetry.enable_from_env(force=otel)
    except ImportError as error:
        fail(str(error))
