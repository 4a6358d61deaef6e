"""The ``--otel`` option ``statebound eval`` and ``run`` share: OpenTelemetry traces of the run."""

from __future__ import annotations

from typing import Any

import typer

from statebound.cli.errors import fail

__all__ = ["OTEL_HELP", "start_tracing"]

OTEL_HELP = ("Send OpenTelemetry traces over OTLP/HTTP (docs/tracing.md); on without it when "
             "OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set. Needs statebound[otel].")


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
