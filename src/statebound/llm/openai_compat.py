"""Any OpenAI-compatible server (OpenAI, vLLM, Ollama, llama.cpp server) through the official SDK.

Settings come from arguments, the environment or the config file (see :mod:`statebound.llm.config`).
The SDK's own retries are off: :mod:`statebound.llm.retry` is the one policy, and a fault that
survives it is a :class:`~statebound.errors.ProviderError`. The API key is a
:class:`~statebound.llm.secrets.Secret`; it is redacted from errors and logs and never in a repr.

Requests go through the SDK's low-level ``client.post`` with a JSON body built here and the reply
parsed with :func:`json.loads`: the SDK's typed request transformation and response models cost
several times more CPU than the HTTP exchange itself. The HTTP client under the SDK is aiohttp
(the ``openai[aiohttp]`` extra) when installed, else httpx; ``transport=`` picks one.
"""

from __future__ import annotations

import asyncio
import functools
import importlib.util
import json
import logging
import re
import weakref
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypeVar

from statebound.errors import (
    ContextOverflow,
    FatalProviderError,
    ModelUnavailable,
    ProviderError,
    ProviderTimeout,
    UnsupportedFeature,
)
from statebound.llm.base import (
    Capabilities,
    Choice,
    Completion,
    Message,
    Request,
    TokenLogprob,
    ToolCall,
    Usage,
    flatten_tool_messages,
)
from statebound.llm.choice_grammar import is_choice_grammar, offered
from statebound.llm.config import OpenAISettings, Transport
from statebound.llm.connection_faults import connection_fault
from statebound.llm.json_schema import enforceable, grammar_for, say_validated_only
from statebound.llm.retry import Fault, RetryPolicy, call_with_retries, parse_retry_after
from statebound.llm.scoring import most_likely
from statebound.llm.secrets import display_url, redact, url_password
from statebound.llm.server_probe import Detection, probe, server_root
from statebound.llm.server_profiles import ResponseFormat, ToolCalls, profile_named
from statebound.llm.server_scoring import (
    EchoScorer,
    NextTokenScorer,
    PromptLogprobsScorer,
    Scorer,
    ServerTokens,
)
from statebound.llm.server_setup import ServerSetup, check_overrides, resolve_setup
from statebound.llm.streaming import TokenSink, token_sink
from statebound.llm.testing import apply_stop
from statebound.llm.tool_grammar import tool_call_request, with_tool_calls
from statebound.llm.usage import checked_count

if TYPE_CHECKING:
    from openai import AsyncOpenAI

__all__ = ["MalformedResponse", "OpenAICompatLLM", "RequestDeadline", "classify_openai_error", "default_transport"]

T = TypeVar("T")
log = logging.getLogger("statebound.llm.servers")
MAX_SERVER_STOPS = 4  # OpenAI accepts at most four stop sequences; the rest are applied here
_STATUS_HINTS = {
    401: "authentication failed: check the API key (OPENAI_API_KEY or api_key=)",
    403: "permission denied: the key may not have access to this model",
    404: "not found: check the model name and the base_url (it usually ends in /v1)",
}


# How OpenAI, vLLM and llama.cpp's server say that a prompt is longer than the context window.
_CONTEXT_OVERFLOW = re.compile(
    r"context_length_exceeded|maximum context length|exceeds? (?:the )?(?:available )?context", re.IGNORECASE
)


def _no_template(note: str) -> Callable[[tuple[Message, ...]], str]:
    def refuse(messages: tuple[Message, ...]) -> str:
        raise UnsupportedFeature(f"scoring chat messages needs the model's chat template: {note}")

    return refuse


class MalformedResponse(Exception):
    """The server answered, but not with a usable completion (retried like other faults)."""


class RequestDeadline(Exception):
    """A request (its whole reply included) took longer than the backend's ``timeout``."""


def default_transport() -> Transport:
    """aiohttp when it is installed (``pip install 'openai[aiohttp]'``), else httpx."""
    return "aiohttp" if importlib.util.find_spec("aiohttp") is not None else "httpx"


def classify_openai_error(error: Exception, *, where: str = "the server", timeout: float = 60.0) -> Fault | None:
    """Which SDK errors are worth retrying, and which error each becomes when retries do not help
    (``where``: the server's host and port, for the message); ``None`` for errors that are not
    provider faults."""
    import openai

    if isinstance(error, MalformedResponse):
        return Fault(f"malformed response: {error}", retryable=True)
    if isinstance(error, RequestDeadline):  # worded as the HTTP client's own timeout, which may come first
        return Fault(f"no reply from {where} {error} (timeout, the whole reply counted); the server may be overloaded "
                     "or drip its reply, or raise timeout=", retryable=True, kind=ProviderTimeout)
    if isinstance(error, openai.APIConnectionError):  # APITimeoutError too: the cause tells which
        kind, message = connection_fault(error, where=where, timeout=timeout) or (
            ProviderError, f"connection to {where} failed ({type(error.__cause__ or error).__name__})")
        return Fault(message, retryable=True, kind=kind)
    if isinstance(error, openai.APIResponseValidationError):
        return Fault(f"malformed response: {error.message}", retryable=True)
    if isinstance(error, openai.APIStatusError):
        message = error.message
        if message.rstrip().endswith(f"Error code: {error.status_code}"):  # a body that is not JSON
            message += f", body {_excerpt(error.response.content)}"
        return _status_fault(error.status_code, message, error.response.headers)
    return None


def _status_fault(status: int, message: str, headers: Any) -> Fault:
    # a server that refuses the request's response_format (llama-cpp-python answers 500) does so every time
    retryable = (status in (408, 409, 429) or status >= 500) and "response_format" not in message
    label = _STATUS_HINTS.get(
        status, "rate limited" if status == 429 else "server error" if status >= 500 else "request rejected"
    )
    kind: type[ProviderError] = ProviderError
    if status in _STATUS_HINTS:
        kind = FatalProviderError  # the key, its access, the model or the URL: every request alike
    elif status in (400, 413) and _CONTEXT_OVERFLOW.search(message) is not None:
        kind = ContextOverflow
    return Fault(f"HTTP {status}, {label}: {message}", retryable=retryable,
                 retry_after=parse_retry_after(headers) if retryable else None, kind=kind)


@dataclass(slots=True)
class _LoopClient:
    """The SDK client of one event loop, and the suspended generator that closes it with the loop."""

    client: AsyncOpenAI
    closer: AsyncGenerator[None, None]


class OpenAICompatLLM:
    """A model behind an OpenAI-compatible HTTP API.

    What the server can do comes from its profile (:mod:`statebound.llm.server_profiles`): found
    on first need by a probe (:mod:`statebound.llm.server_probe`; ``capabilities`` asks for it, so
    before a run starts), or named with ``profile=``. Each option given wins over the profile:
    ``completions`` (the server has the legacy ``/completions`` endpoint, needed for
    ``Request(prompt=...)``), ``grammar_field`` (the request field a GBNF grammar goes in: ``grammar``
    for llama.cpp's servers; without one, grammars are refused), ``scoring`` (how the
    log-probabilities of given text are read: ``next-token``, ``echo``, ``prompt-logprobs``, true for
    the profile's, false for none; :mod:`statebound.llm.server_scoring`), ``chat_template`` (what
    chat messages are rendered with before they are scored: a template, or a GGUF or template
    file), ``top_logprobs`` (how many alternatives per generated token the server reports),
    ``response_format`` (how a ``Request.schema`` is sent: ``json_schema``, ``json_object`` (the
    schema beside it, as llama-cpp-python takes it), ``grammar`` (as GBNF in ``grammar_field``) or
    ``none``), ``tool_calls`` (how ``Request.tools`` are sent: ``native``, the server's ``tools``;
    ``grammar``, described in a system message with the reply held to a call by a grammar,
    :mod:`statebound.llm.tool_grammar`; ``none``). The HTTP client is ``settings.transport``
    (``None``: :func:`default_transport`). Each event loop gets its own client; ``await
    llm.aclose()`` closes the running loop's (``asyncio.run`` also closes it).
    """

    def __init__(self, settings: OpenAISettings, *, profile: str | None = None, retry: RetryPolicy | None = None,
                 **overrides: Any) -> None:
        check_overrides(overrides)
        self._overrides = overrides
        self._named = None if profile is None else profile_named(profile)
        self._setup: ServerSetup | None = None
        self._scorer: Scorer | None = None
        self._said_estimated = False  # a streamed reply's estimated usage is named once per backend
        self.settings = settings
        self.retry = retry or RetryPolicy(attempts=settings.attempts)
        credentials = url_password(settings.base_url) is not None  # aiohttp refuses them beside a key
        self.transport: Transport = settings.transport or ("httpx" if credentials else default_transport())
        if self.transport == "aiohttp" and credentials:
            raise ModelUnavailable(
                "transport 'aiohttp' cannot send a user and password from the base_url beside the API "
                "key: use transport='httpx' (STATEBOUND_HTTP_TRANSPORT=httpx)"
            )
        if self.transport == "aiohttp" and importlib.util.find_spec("aiohttp") is None:
            raise ModelUnavailable(
                "transport 'aiohttp' needs aiohttp: pip install 'openai[aiohttp]', "
                "or use transport='httpx' (STATEBOUND_HTTP_TRANSPORT=httpx)"
            )
        if self._named is not None:  # everything is known: an impossible combination is refused now
            self._setup = resolve_setup(Detection(self._named, "named by the profile option"), settings, overrides)
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopClient] = (
            weakref.WeakKeyDictionary()
        )

    @property
    def setup(self) -> ServerSetup:
        """What is sent to this server: its profile (probed on first need) and the options given."""
        if self._setup is None:
            detection = probe(self.settings)
            setup = resolve_setup(detection, self.settings, self._overrides)
            if detection.transient:  # the server may be up later: probe again then
                return setup
            self._setup = setup
        return self._setup

    @property
    def response_format(self) -> ResponseFormat:
        return self.setup.response_format

    @property
    def tool_calls(self) -> ToolCalls:
        return self.setup.tool_calls

    @property
    def grammar_field(self) -> str | None:
        return self.setup.grammar_field

    def __repr__(self) -> str:
        return f"OpenAICompatLLM(model={self.model!r}, base_url={self._url!r}, transport={self.transport!r})"

    @property
    def _url(self) -> str:
        """The base URL as it may be shown (a password in it masked)."""
        return display_url(self.settings.base_url)

    @property
    def _where(self) -> str:
        """The server's host and port, as messages name it."""
        return self._url.partition("://")[2].partition("/")[0].rpartition("@")[2] or self._url

    @property
    def model(self) -> str:
        return f"openai:{self.settings.model}"

    @property
    def capabilities(self) -> Capabilities:
        return self.setup.capabilities()

    async def aclose(self) -> None:
        """Close the running event loop's HTTP client and its connections (a no-op if none)."""
        opened = self._clients.pop(asyncio.get_running_loop(), None)
        if opened is not None:
            await opened.closer.aclose()

    async def _client(self) -> AsyncOpenAI:
        """One SDK client per event loop (its connection pool belongs to the loop)."""
        loop = asyncio.get_running_loop()
        opened = self._clients.get(loop)
        if opened is None:
            client = self._new_client()
            opened = self._clients[loop] = _LoopClient(client, self._close_with_loop(loop, client))
            await anext(opened.closer)  # registers it with the loop; returns at once
        return opened.client

    async def _close_with_loop(
        self, loop: asyncio.AbstractEventLoop, client: AsyncOpenAI
    ) -> AsyncGenerator[None, None]:
        """Suspended until closed: by :meth:`aclose`, or else by the loop's ``shutdown_asyncgens()``
        (``asyncio.run`` calls it), so no connection outlives its loop."""
        try:
            yield
        finally:
            if (opened := self._clients.get(loop)) is not None and opened.client is client:
                del self._clients[loop]  # the client refers to the loop: forget both
            await client.close()

    def _new_client(self) -> AsyncOpenAI:
        import openai

        http_client = None
        if self.transport == "aiohttp":
            aiohttp_client = getattr(openai, "DefaultAioHttpClient", None)
            if aiohttp_client is not None:
                http_client = aiohttp_client(timeout=self.settings.timeout)
            elif self.settings.transport == "aiohttp":
                raise ModelUnavailable(
                    f"openai {openai.__version__} has no aiohttp transport: upgrade it "
                    "(pip install -U 'openai[aiohttp]') or use transport='httpx'"
                )
            else:  # only the default asked for aiohttp; this older SDK has httpx alone
                self.transport = "httpx"
        return openai.AsyncOpenAI(
            api_key=self.settings.api_key.reveal(),
            base_url=self.settings.base_url,
            timeout=self.settings.timeout,
            max_retries=0,
            http_client=http_client,
        )

    async def complete(self, request: Request) -> Completion:
        self._check(request)
        if request.score is not None:
            prompt = request.prompt if request.messages is None else flatten_tool_messages(request.messages)
            found, usage = await self._scoring().score(prompt, request.scored_texts)  # type: ignore[arg-type]
            scored = tuple(Choice(text, "stop", values) for text, values in zip(request.scored_texts, found))
            return Completion(choices=scored, usage=usage, model=self.model)
        if request.tools and self.tool_calls == "grammar":
            return with_tool_calls(await self.complete(tool_call_request(request, backend=self.model)), request.tools)
        choices: list[Choice] = []
        usage = Usage()
        while len(choices) < request.n:  # servers without ``n`` send one choice per call
            try:
                more, more_usage = await self._retrying(lambda: self._call(request, request.n - len(choices)))
            except ProviderError as error:
                if request.schema is None or "response_format" not in str(error):
                    raise
                raise UnsupportedFeature(
                    f"{error}; the server does not take response_format {self.response_format!r}: for "
                    "llama-cpp-python's server use --model-option response_format=json_object") from None
            choices.extend(more)
            usage += more_usage
        if request.tools and request.tool_choice != "auto" and not all(c.tool_calls for c in choices):
            raise UnsupportedFeature(
                f"openai-compatible {self._url} answered without a tool call although tool_choice="
                f"{request.tool_choice!r} requires one: the server ignores tools; use "
                "--model-option tool_calls=grammar with grammar_field=grammar (llama.cpp's servers)")
        return Completion(choices=tuple(choices[: request.n]), usage=usage, model=self.model)

    async def _retrying(self, call: Callable[[], Awaitable[T]]) -> T:
        """``call()`` under the backend's retry policy (provider faults retried, then raised), each
        try within ``timeout`` seconds as a whole: the HTTP client's timeout bounds each read, so a
        server that drips its reply a byte at a time would otherwise hold the run for ever."""
        deadline = self.settings.timeout

        async def within_deadline() -> T:
            try:
                async with asyncio.timeout(deadline):
                    return await call()
            except TimeoutError:
                raise RequestDeadline(f"within {deadline:g} s") from None

        return await call_with_retries(
            within_deadline,
            provider=f"openai-compatible {self._url}",
            classify=functools.partial(classify_openai_error, where=self._where, timeout=self.settings.timeout),
            policy=self.retry,
            secrets=(self.settings.api_key, url_password(self.settings.base_url)),
        )

    def _check(self, request: Request) -> None:
        setup, capabilities = self.setup, self.capabilities
        if request.score is not None and not (capabilities.chat_scoring if request.messages is not None
                                              else capabilities.scoring):
            why = ("it has no scoring transport" if setup.scoring is None else
                   f"chat messages need a chat template: {setup.template_note}")
            raise UnsupportedFeature(
                f"openai-compatible {self._url} ({setup.profile.name} profile) cannot score text: {why}; "
                "choose with choice=label or choice=grammar, or name the server with --model-option profile=NAME "
                "(statebound models --probe URL says what it can do)")
        if request.prompt is not None and not capabilities.completion:
            raise UnsupportedFeature(
                f"{self.settings.model} has no /completions endpoint here: send chat messages, "
                "or pass completions=True if the server has one"
            )
        if request.schema is not None and setup.response_format == "none":
            raise UnsupportedFeature(
                f"openai-compatible {self._url} is set up to take no JSON schema (response_format='none'): "
                "use response_format='json_schema' (OpenAI, vLLM, Ollama) or 'json_object' (llama-cpp-python)")
        if request.tools and setup.tool_calls == "none":
            raise UnsupportedFeature(
                f"openai-compatible {self._url} is set up to take no tools (tool_calls='none'): use "
                "tool_calls='native', or 'grammar' with grammar_field='grammar' for llama.cpp's servers")
        if request.grammar is not None and setup.grammar_field is None:
            raise UnsupportedFeature(
                f"openai-compatible {self._url} ({setup.profile.name} profile) takes no grammar: pass "
                "grammar_field='grammar' for a llama.cpp server, or use a local model"
            )

    def _scoring(self) -> Scorer:
        """The scorer of this server's scoring transport (made once)."""
        if self._scorer is None:
            setup = self.setup
            where = f"openai-compatible {self._url} ({setup.profile.name} profile)"
            tokens = None if setup.tokenizer is None else ServerTokens(
                self._post, server_root(self.settings.base_url), setup.tokenizer, self.settings.model)
            render = setup.template.render if setup.template is not None else _no_template(setup.template_note)
            if setup.scoring == "next-token" and tokens is not None:
                self._scorer = NextTokenScorer(tokens, render, where, token_prompts=setup.profile.token_prompts)
            elif setup.scoring == "prompt-logprobs" and tokens is not None:
                self._scorer = PromptLogprobsScorer(tokens, where)
            else:
                self._scorer = EchoScorer(self._post, self.settings.model, render, where)
        return self._scorer

    async def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """``body`` POSTed to ``path`` (under the base URL, or a whole URL), under the retry policy;
        the reply as JSON."""
        async def once() -> dict[str, Any]:
            client = await self._client()
            raw = await client.post(path, body=body, cast_to=bytes)
            try:
                reply = json.loads(raw)
            except ValueError as error:
                raise MalformedResponse(f"the body is not JSON ({error}): {_excerpt(raw)}") from None
            if not isinstance(reply, dict):
                raise MalformedResponse(f"the reply is not a JSON object: {_excerpt(raw)}")
            return reply

        return await self._retrying(once)

    def _body(self, request: Request, n: int) -> dict[str, Any]:
        """The JSON request body for ``/chat/completions`` or ``/completions``."""
        body: dict[str, Any] = {"model": self.settings.model, "temperature": request.temperature}
        # api.openai.com's newer chat models refuse max_tokens; other servers may not know the new name
        if self.settings.is_openai and request.messages is not None:
            body["max_completion_tokens"] = request.max_tokens
        else:
            body["max_tokens"] = request.max_tokens
        if n > 1:
            body["n"] = n
        if request.stop:
            body["stop"] = list(request.stop[:MAX_SERVER_STOPS])
        if request.seed is not None:
            body["seed"] = request.seed
        if request.grammar is not None:
            self._add_grammar(body, request.grammar)
        if request.schema is not None:
            self._add_schema(body, request.schema)
        if request.tools:
            body["tools"] = [{"type": "function", "function": {"name": tool.name, "description": tool.description,
                                                               "parameters": dict(tool.parameters)}}
                             for tool in request.tools]
            body["tool_choice"] = request.tool_choice if request.tool_choice in ("auto", "required") else {
                "type": "function", "function": {"name": request.tool_choice}}
        if request.messages is not None:
            body["messages"] = self._messages(request.messages)
            if request.logprobs or request.top_logprobs:
                body["logprobs"] = True
                body["top_logprobs"] = max(1, request.top_logprobs)  # llama.cpp server sends none without it
        else:
            body["prompt"] = request.prompt
            if request.logprobs or request.top_logprobs:
                body["logprobs"] = max(1, request.top_logprobs)
        return body

    def _messages(self, messages: tuple[Message, ...]) -> list[dict[str, Any]]:
        """The chat messages as the server takes them: tool calls and results in the provider's
        fields with ``tool_calls="native"``, else as text."""
        if self.tool_calls != "native":
            return [{"role": m.role, "content": m.content} for m in flatten_tool_messages(messages)]
        return [_message(m) for m in messages]

    def _add_grammar(self, body: dict[str, Any], grammar: str) -> None:
        """The grammar in the request body: in ``grammar_field`` (a dotted name is a nested field:
        vLLM's ``structured_outputs.grammar``), or as the list of texts it allows where the server
        holds a reply to a list itself (vLLM's ``structured_outputs.choice``)."""
        setup = self.setup
        if setup.profile.choice_field and is_choice_grammar(grammar):
            body.setdefault("structured_outputs", {})["choice"] = offered(grammar)
            return
        *parents, name = (setup.grammar_field or "grammar").split(".")
        target = body
        for parent in parents:
            target = target.setdefault(parent, {})
        target[name] = grammar

    def _add_schema(self, body: dict[str, Any], schema: Mapping[str, Any]) -> None:
        """The schema in the request body, in the form this server takes (``response_format``)."""
        if self.response_format == "json_schema":
            body["response_format"] = {"type": "json_schema",
                                       "json_schema": {"name": "reply", "schema": dict(schema), "strict": True}}
        elif self.response_format == "json_object":  # llama-cpp-python enforces it with a grammar too
            say_validated_only(schema, backend=f"openai-compatible {self._url} (response_format json_object)")
            body["response_format"] = {"type": "json_object", "schema": enforceable(schema)}
        else:
            self._add_grammar(body, grammar_for(schema, backend=f"openai-compatible {self._url}"))

    async def _call(self, request: Request, n: int) -> tuple[list[Choice], Usage]:
        client = await self._client()
        path = "/chat/completions" if request.messages is not None else "/completions"
        body = self._body(request, n)
        sink = token_sink() if n == 1 and not request.tools and not (request.logprobs or request.top_logprobs) else None
        if sink is not None:
            choices, usage = _parse(await self._streamed(client, request, body, sink), request)
        else:
            choices, usage = _parse(await client.post(path, body=body, cast_to=bytes), request)
        return [self._unechoed(choice) for choice in choices], usage

    def _unechoed(self, choice: Choice) -> Choice:
        """``choice`` with the backend's secrets masked by value, as in an error body: a server may
        echo the key in a reply it answers successfully, which is then stored and printed."""
        secrets = (self.settings.api_key, url_password(self.settings.base_url))
        text = redact(choice.text, *secrets)
        calls = tuple(replace(call, arguments=redact(call.arguments, *secrets)) for call in choice.tool_calls)
        if text == choice.text and calls == choice.tool_calls:
            return choice  # as built (a reply cut to its bound keeps its note)
        return replace(choice, text=text, tool_calls=calls)

    async def _streamed(self, client: AsyncOpenAI, request: Request, body: dict[str, Any], sink: TokenSink) -> bytes:
        """The reply by server-sent events, each piece handed to ``sink``, gathered into the body an
        unstreamed call returns. A server that sends no usage with a stream (llama-cpp-python's)
        gets its pieces counted as completion tokens and its prompt counted by
        :meth:`_prompt_tokens`."""
        import openai

        path = "/chat/completions" if request.messages is not None else "/completions"
        events = await client.post(path, body={**body, "stream": True, "stream_options": {"include_usage": True}},
                                   cast_to=object, stream=True, stream_cls=openai.AsyncStream[object])
        pieces: list[str] = []
        finish, usage = None, None
        async for event in events:
            if not isinstance(event, dict):
                raise MalformedResponse(f"a streamed event is a {type(event).__name__}, not an object")
            usage = event.get("usage") or usage
            for choice in event.get("choices") or ():
                piece = (choice.get("delta") or {}).get("content") if "delta" in choice else choice.get("text")
                if piece:
                    pieces.append(piece)
                    sink(piece)
                finish = choice.get("finish_reason") or finish
        if usage is None:
            usage = {"prompt_tokens": await self._prompt_tokens(request), "completion_tokens": len(pieces)}
        text = "".join(pieces)
        shape = {"message": {"role": "assistant", "content": text}} if path == "/chat/completions" else {"text": text}
        return json.dumps({"choices": [{**shape, "finish_reason": finish}], "usage": usage}).encode()

    async def _prompt_tokens(self, request: Request) -> int:
        """The prompt's tokens, counted with the server's tokenize endpoint (a chat rendered by its
        template first); where it has none, estimated at four characters a token, said once."""
        setup = self.setup
        messages = None if request.messages is None else flatten_tool_messages(request.messages)
        text = request.prompt if messages is None else (setup.template.render(messages) if setup.template else None)
        if setup.tokenizer is not None and text is not None:
            tokens = ServerTokens(self._post, server_root(self.settings.base_url), setup.tokenizer, self.settings.model)
            return len(await tokens.tokenize(text))
        if not self._said_estimated:
            self._said_estimated = True
            log.warning("openai-compatible %s sends no usage with a streamed reply and cannot count the prompt's "
                        "tokens here: its prompt tokens are estimated (4 characters a token; said once)", self._url)
        return max(1, len(text or "".join(m.content for m in messages or ())) // 4)


def _parse(raw: bytes, request: Request) -> tuple[list[Choice], Usage]:
    try:
        reply = json.loads(raw)
    except ValueError as error:  # the body is not JSON (an HTML error page, a cut-off reply)
        raise MalformedResponse(f"the body is not JSON ({error}): {_excerpt(raw)}") from None
    if not isinstance(reply, dict):
        raise MalformedResponse(f"the reply is not a JSON object: {_excerpt(raw)}")
    raw_choices = reply.get("choices")
    if not raw_choices or not isinstance(raw_choices, list):
        raise MalformedResponse(f"no choices in the reply: {_excerpt(raw)}")
    choices = [_choice(c, request) for c in raw_choices]
    raw_usage = reply.get("usage")
    raw_usage = raw_usage if isinstance(raw_usage, dict) else {}
    usage = Usage(
        prompt_tokens=_count(raw_usage.get("prompt_tokens"), "prompt_tokens"),
        completion_tokens=_count(raw_usage.get("completion_tokens"), "completion_tokens"),
        calls=1,
    )
    return choices, usage


def _excerpt(raw: bytes) -> str:
    return repr(raw[:80].decode("utf-8", errors="replace")) if raw else "(empty body)"


def _count(value: object, field: str) -> int:
    return checked_count(value, field=field, source="the openai-compatible server") or 0


def _choice(raw: object, request: Request) -> Choice:
    if not isinstance(raw, dict):
        raise MalformedResponse(f"a choice is a {type(raw).__name__}, not an object")
    message = raw.get("message")
    if message is not None:  # chat shape
        if not isinstance(message, dict):
            raise MalformedResponse(f"a choice's message is a {type(message).__name__}, not an object")
        text = message.get("content")
    elif "text" in raw:  # completion shape
        text = raw["text"]
    else:
        raise MalformedResponse("a choice has neither message nor text")
    if text is not None and not isinstance(text, str):
        raise MalformedResponse(f"a choice's text is a {type(text).__name__}, not a string")
    original = text or ""
    text, _ = apply_stop(original, request.stop[MAX_SERVER_STOPS:])
    finish = raw.get("finish_reason")
    return Choice(
        text=text,
        finish_reason="stop" if text != original else (finish if isinstance(finish, str) and finish
                                                      else "stop"),
        logprobs=_logprobs(raw.get("logprobs")) if request.logprobs or request.top_logprobs else None,
        tool_calls=_tool_calls(message.get("tool_calls")) if isinstance(message, dict) and request.tools else (),
    )


def _message(message: Message) -> dict[str, Any]:
    """One chat message in OpenAI's shape (an assistant's ``tool_calls``, a tool result's id)."""
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        out["tool_calls"] = [{"id": call.id, "type": "function",
                              "function": {"name": call.name, "arguments": call.arguments}}
                             for call in message.tool_calls]
    if message.tool_call_id is not None:
        out["tool_call_id"] = message.tool_call_id
    return out


def _tool_calls(raw: object) -> tuple[ToolCall, ...]:
    """The chat shape's ``tool_calls`` (``[{id, type: function, function: {name, arguments}}]``)."""
    if raw is None:
        return ()
    calls: list[Any] = raw if isinstance(raw, list) else []
    if not isinstance(raw, list):
        raise MalformedResponse(f"tool_calls is a {type(raw).__name__}, not a list")
    try:
        return tuple(ToolCall(str(call.get("id") or f"call{index}"), str(call["function"]["name"]),
                              arguments if isinstance(arguments := call["function"].get("arguments"), str)
                              else json.dumps(arguments or {}))
                     for index, call in enumerate(calls))
    except (TypeError, KeyError, AttributeError) as error:
        raise MalformedResponse(f"unreadable tool_calls ({type(error).__name__}: {error})") from None


def _logprobs(raw: object) -> tuple[TokenLogprob, ...] | None:
    """Token log-probabilities from the chat shape (``content: [{token, logprob}]``) or the
    completion shape (``tokens`` and ``token_logprobs``); ``None`` when the server sent none."""
    if not isinstance(raw, dict):
        return None
    try:
        if (content := raw.get("content")) is not None:  # chat shape
            return tuple(TokenLogprob(str(t["token"]), float(t["logprob"]),
                                      most_likely((a["token"], a["logprob"]) for a in t.get("top_logprobs") or ()))
                         for t in content)
        tokens, values = raw.get("tokens"), raw.get("token_logprobs")
        if tokens is None or values is None:
            return None
        tops = raw.get("top_logprobs") or [None] * len(tokens)
        return tuple(TokenLogprob(str(t), float(v), most_likely((top or {}).items()))
                     for t, v, top in zip(tokens, values, tops) if v is not None)
    except (TypeError, KeyError, ValueError, AttributeError) as error:
        raise MalformedResponse(f"unreadable logprobs ({type(error).__name__}: {error})") from None

