"""The ``--otel`` option ``statebound eval`` and ``run`` share: OpenTelemetry traces of the run."""

from __future__ import annotations

from typing import Any

import typer

from statebound.cli.errors import fail

__all__ = ["OTEL_HELP", "otel_content_option", "otel_option", "secrets_of", "start_tracing"]

# Typer renders option help as Rich markup: "\\[" keeps "[otel]" from being read as a style tag.
OTEL_HELP = ("Send OpenTelemetry traces (spans per run, episode, state, model call, tool and pick) over OTLP/HTTP "
             "to OTEL_EXPORTER_OTLP_ENDPOINT (default http://localhost:4318); on without this flag when "
             "OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set. "
             "Needs pip install 'statebound\\[otel]'.")


def otel_option() -> Any:
    """The typer option (a fresh one per command)."""
    return typer.Option(False, "--otel", help=OTEL_HELP)


def otel_content_option() -> Any:
    return typer.Option(False, "--otel-content", help=(
        "Trace with content: prompts and replies on LLM spans, arguments and results on tool spans, secrets "
        "masked (implies --otel; OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true does the same)."))


def start_tracing(otel: bool, content: bool = False, secrets: tuple[str, ...] = ()) -> None:
    """Turn tracing on when asked or when the environment names an OTLP endpoint, with content
    when asked (``secrets`` masked in it); a missing extra is a one-line mistake."""
    from statebound import telemetry

    try:
        telemetry.enable_from_env(force=otel, content=content, secrets=secrets)
    except ImportError as error:
        fail(str(error))


def secrets_of(pairs: list[str]) -> tuple[str, ...]:
    """The secrets among ``--model-option`` values (masked in traced content); none when they do
    not parse (the command says why)."""
    from statebound.bench.options import parse_pairs
    from statebound.llm.model_options import secret_values

    try:
        return secret_values(parse_pairs(pairs, flag="--model-option"))
    except (typer.BadParameter, ValueError):
        return ()
