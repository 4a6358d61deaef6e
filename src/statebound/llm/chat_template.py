"""A model's chat template rendered on the client, as the embedded model renders it.

Scoring a choice over a server needs the exact text the server's model would read before its
reply: the chat template applied to the messages, ending where the assistant's reply begins. The
template comes from the server where it publishes one (llama.cpp's ``llama-server``: ``/props``),
from the GGUF file's metadata when the file is at hand (the path llama-cpp-python's server gives as
its model's id), or from the ``chat_template`` model option (the template's text, or the path of a
GGUF or template file). It is rendered with Jinja2 in a sandbox, with the settings and variables
llama-cpp-python's own renderer uses (``trim_blocks``, ``lstrip_blocks``, ``bos_token``,
``eos_token``, ``raise_exception``, ``strftime_now``, ``add_generation_prompt``), so the text is the
one the embedded model scores.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from statebound.errors import DefinitionError, UnsupportedFeature
from statebound.llm.base import Message

__all__ = ["ChatTemplate", "gguf_template", "template_option"]


@dataclass(frozen=True, slots=True)
class ChatTemplate:
    """A Jinja chat template with the special tokens it may write; ``source`` says where it came from."""

    template: str
    bos_token: str = ""
    eos_token: str = ""
    source: str = "the chat_template option"

    def render(self, messages: tuple[Message, ...]) -> str:
        """The text before the assistant's reply to ``messages``; a trailing assistant message is
        the start of that reply, continued as is."""
        started = ""
        if messages and messages[-1].role == "assistant":
            messages, started = messages[:-1], messages[-1].content
        environment = _compiled(self.template)

        def raise_exception(message: str) -> None:
            raise DefinitionError(f"the chat template ({self.source}) refused the messages: {message}")

        rendered = environment.render(
            messages=[{"role": m.role, "content": m.content} for m in messages], bos_token=self.bos_token,
            eos_token=self.eos_token, raise_exception=raise_exception, add_generation_prompt=True,
            strftime_now=lambda form: datetime.now().strftime(form))
        return rendered + started


@functools.lru_cache(maxsize=8)
def _compiled(template: str) -> Any:
    try:
        import jinja2
        from jinja2.sandbox import ImmutableSandboxedEnvironment
    except ImportError as error:  # pragma: no cover - jinja2 is a dependency
        raise UnsupportedFeature("rendering a chat template needs jinja2: pip install jinja2") from error
    try:
        return ImmutableSandboxedEnvironment(loader=jinja2.BaseLoader(), trim_blocks=True,
                                             lstrip_blocks=True).from_string(template)
    except jinja2.TemplateSyntaxError as error:
        raise DefinitionError(f"the chat template does not parse (line {error.lineno}): {error.message}") from None


@functools.lru_cache(maxsize=4)
def gguf_template(path: str) -> ChatTemplate | None:
    """The chat template stored in the GGUF file at ``path`` with its BOS and EOS tokens' text,
    read by llama-cpp-python without loading the weights; None when the file has none."""
    from statebound.llm.model_files import llama_cpp_missing

    if reason := llama_cpp_missing():
        raise UnsupportedFeature(f"reading the chat template of {path} needs llama-cpp-python ({reason}); "
                                 "give the template with --model-option chat_template=FILE")
    from llama_cpp import Llama
    from llama_cpp._utils import suppress_stdout_stderr

    with suppress_stdout_stderr(disable=False):  # llama.cpp writes its own notes on stderr
        vocab = Llama(model_path=path, vocab_only=True, verbose=False)
    try:
        template = vocab.metadata.get("tokenizer.chat_template")
        if not template:
            return None

        def text(token: int) -> str:
            return vocab._model.token_get_text(token) if token != -1 else ""

        return ChatTemplate(template, text(vocab.token_bos()), text(vocab.token_eos()), f"the GGUF file {path}")
    finally:
        vocab.close()


def template_option(value: object) -> ChatTemplate:
    """The ``chat_template`` model option: a GGUF file's path, a template file's path, or the
    template's text itself."""
    if not isinstance(value, str) or not value.strip():
        raise DefinitionError("chat_template must be a chat template's text or the path of a GGUF or "
                              "template file (--model-option chat_template=FILE)")
    if "{" not in value:  # a template always has a tag; a path never does
        path = Path(value).expanduser()
        if not path.is_file():
            raise DefinitionError(f"chat_template {value!r} is neither a template (no {{% or {{{{) nor a file")
        if path.suffix == ".gguf":
            found = gguf_template(str(path))
            if found is None:
                raise DefinitionError(f"the GGUF file {path} holds no chat template: give the template's text "
                                      "or a template file as chat_template")
            return found
        return ChatTemplate(path.read_text(encoding="utf-8"), source=f"the template file {path}")
    return ChatTemplate(value)
