"""How an ``openai:`` model talks to its server: the detected profile with the options given.

:func:`resolve_setup` merges a :class:`~statebound.llm.server_probe.Detection` with the model
options set explicitly (each wins over the profile), refuses combinations the server cannot do
(a grammar field the profile lacks for ``response_format='grammar'`` or ``tool_calls='grammar'``,
a scoring transport without the endpoint it needs) and finds the chat template scoring renders
chat messages with. :meth:`ServerSetup.report` says, per capability, what is used and how it was
established (``statebound models --probe``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args

from statebound.errors import DefinitionError, UnsupportedFeature
from statebound.llm.base import Capabilities
from statebound.llm.chat_template import ChatTemplate, gguf_template, template_option
from statebound.llm.config import OpenAISettings
from statebound.llm.json_schema import GRAMMAR_SCHEMAS
from statebound.llm.server_probe import Detection
from statebound.llm.server_profiles import (
    TRANSPORTS,
    ResponseFormat,
    ScoringTransport,
    ServerProfile,
    Tokenizer,
    ToolCalls,
    check_choice,
)

__all__ = ["OVERRIDES", "ServerSetup", "check_overrides", "resolve_setup"]

# the model options a profile sets, each of which may be given to override it
OVERRIDES = ("grammar_field", "response_format", "tool_calls", "top_logprobs", "scoring", "completions",
             "chat_template")
_COMPLETIONS_MODELS = ("gpt-3.5-turbo-instruct", "davinci-002", "babbage-002")


@dataclass(frozen=True, slots=True)
class ServerSetup:
    """What the backend sends this server (see the module docstring)."""

    detection: Detection
    grammar_field: str | None
    response_format: ResponseFormat
    tool_calls: ToolCalls
    top_logprobs: int
    scoring: ScoringTransport | None
    completions: bool
    template: ChatTemplate | None
    template_note: str  # where the template came from, or why there is none
    given: frozenset[str]  # the options given explicitly

    @property
    def profile(self) -> ServerProfile:
        return self.detection.profile

    @property
    def tokenizer(self) -> Tokenizer | None:
        return self.profile.tokenizer

    @property
    def chat_scoring(self) -> bool:
        return self.scoring is not None and (self.template is not None or self.scoring == "prompt-logprobs")

    def capabilities(self) -> Capabilities:
        return Capabilities(
            completion=self.completions, chat=True, logprobs=True,
            grammar=self.grammar_field is not None, scoring=self.scoring is not None and self.completions,
            chat_scoring=self.chat_scoring, top_logprobs=self.top_logprobs, schema=self.response_format != "none",
            tools=self.tool_calls != "none",
            extras=frozenset({"seed", *((GRAMMAR_SCHEMAS,) if self.response_format in ("json_object", "grammar")
                                        else ())}))

    def _how(self, name: str) -> str:
        return "the option given" if name in self.given else f"the {self.profile.name} profile"

    def report(self) -> list[tuple[str, str, str]]:
        """(capability, what is used, how it was established) for each capability."""
        scoring = ("no" if self.scoring is None else
                   f"{self.scoring}, text prompts{' and chat messages' if self.chat_scoring else ' only'}")
        choice = " (and a choice by structured_outputs.choice)" if self.profile.choice_field else ""
        return [
            ("server", self.profile.title, self.detection.how),
            ("scoring (choice=score)", scoring, self._how("scoring")),
            ("chat template for scoring", self.template_note, self._how("chat_template")),
            ("grammar (choice=grammar)", f"GBNF in {self.grammar_field!r}{choice}" if self.grammar_field else "no",
             self._how("grammar_field")),
            ("top log-probabilities (choice=label)", str(self.top_logprobs) if self.top_logprobs else "no",
             self._how("top_logprobs")),
            ("JSON schema (CallLLM(schema=))", self.response_format, self._how("response_format")),
            ("tool calls (CallLLM(tools=))", self.tool_calls, self._how("tool_calls")),
            ("plain-text prompts (/completions)", "yes" if self.completions else "no", self._how("completions")),
            ("usage of a streamed reply", "sent by the server" if self.profile.stream_usage else
             "prompt tokens counted with its tokenize endpoint" if self.tokenizer else "estimated",
             f"the {self.profile.name} profile"),
        ]


def check_overrides(options: Mapping[str, Any]) -> None:
    """Refuse an override of a kind the backend cannot take (before anything is sent)."""
    if "response_format" in options:
        check_choice("response_format", options["response_format"], get_args(ResponseFormat))
    if "tool_calls" in options:
        check_choice("tool_calls", options["tool_calls"], get_args(ToolCalls))
    if "scoring" in options and not isinstance(options["scoring"], bool):
        check_choice("scoring", options["scoring"], ("true", "false", *TRANSPORTS))
    top = options.get("top_logprobs", 0)
    if isinstance(top, bool) or not isinstance(top, int) or top < 0:
        raise DefinitionError(f"top_logprobs must be a count of 0 or more (0: the server reports no "
                              f"alternatives; OpenAI allows 20), not {top!r}")


def resolve_setup(detection: Detection, settings: OpenAISettings, options: Mapping[str, Any]) -> ServerSetup:
    """The profile of ``detection`` with the explicit ``options`` (see the module docstring)."""
    profile = detection.profile
    grammar_field = options.get("grammar_field", profile.grammar_field)
    response_format = options.get("response_format", profile.response_format)
    tool_calls = options.get("tool_calls", profile.tool_calls)
    where = f"openai-compatible {settings.model} ({profile.name} profile)"
    for name, value in (("response_format", response_format), ("tool_calls", tool_calls)):
        if value == "grammar" and grammar_field is None:
            raise DefinitionError(f"{name}='grammar' holds replies with a grammar, and {where} takes none: give "
                                  "grammar_field too (grammar_field='grammar' for llama.cpp's servers)")
    completions = options.get("completions")
    if completions is None:
        completions = not settings.is_openai or settings.model.startswith(_COMPLETIONS_MODELS)
    scoring = _scoring(options.get("scoring"), profile, where)
    template, note = _template(options.get("chat_template"), detection) if scoring is not None else (None, "not needed")
    return ServerSetup(detection, grammar_field, response_format, tool_calls,
                       options.get("top_logprobs", profile.top_logprobs), scoring, bool(completions), template, note,
                       frozenset(name for name in OVERRIDES if name in options))


def _scoring(value: object, profile: ServerProfile, where: str) -> ScoringTransport | None:
    if value is None:
        return profile.scoring
    if value in (False, "false"):
        return None
    transport = (profile.scoring or "echo") if value in (True, "true") else value
    if transport in ("next-token", "prompt-logprobs") and profile.tokenizer is None:
        raise DefinitionError(f"scoring={transport!r} needs the server's tokenize endpoint, which {where} has not; "
                              "scoring=echo asks for the echoed prompt instead")
    if transport == "prompt-logprobs" and profile.tokenizer != "vllm":
        raise DefinitionError(f"scoring='prompt-logprobs' is vLLM's; {where} is not vLLM")
    return transport  # type: ignore[return-value]


def _template(option: object, detection: Detection) -> tuple[ChatTemplate | None, str]:
    """The chat template chat messages are rendered with before scoring, and where it came from
    (or why there is none, naming the option that supplies it)."""
    if option is not None:
        template = template_option(option)
        return template, template.source
    source = detection.profile.template
    if source == "server":
        return None, "the server's own (its tokenize endpoint renders the messages)"
    if source == "props" and isinstance(detection.props.get("chat_template"), str) and detection.props["chat_template"]:
        props = detection.props
        return (ChatTemplate(props["chat_template"], str(props.get("bos_token") or ""), str(props.get("eos_token") or ""),
                             "the server's /props"), "the server's /props")
    if source == "gguf":
        files = [model for model in detection.model_ids if model.endswith(".gguf") and Path(model).is_file()]
        if files:
            try:
                stored = gguf_template(files[0])
            except UnsupportedFeature as error:
                return None, f"none: {error}"
            if stored is not None:
                return stored, stored.source
            return None, f"none: {files[0]} holds no chat template; give --model-option chat_template=FILE"
        return None, (f"none: the server's model ({', '.join(detection.model_ids) or 'unnamed'}) is no GGUF file "
                      "at hand; give --model-option chat_template=FILE (a GGUF or a template file)")
    return None, "none: give --model-option chat_template=FILE (a GGUF or a template file) to score chat messages"
