"""Server profiles: what a probe finds behind a base_url (scripted servers that answer as each
kind does; llama-cpp-python's real server: test_server_scoring.py and the CLI test below), what
each profile sends, the options that override it, and the combinations refused before a run."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from llm_fault_server import OK, FaultServer, Reply

from statebound.errors import DefinitionError, UnsupportedFeature
from statebound.llm.base import Request, chat, complete_sync
from statebound.llm.model_files import llama_cpp_missing
from statebound.llm.registry import open_model

Server = tuple[FaultServer, str]
KINDS = [  # owned_by, the GET answers only that server has, the profile found
    ("vllm", {"/version": {"version": "0.32.0"}}, "vllm"),
    ("llamacpp", {"/props": {"default_generation_settings": {}, "chat_template": "{{ messages[0]['content'] }}",
                             "bos_token": "<s>"}}, "llama-server"),
    ("sglang", {"/get_model_info": {"model_path": "m"}}, "sglang"),
    ("library", {"/api/version": {"version": "0.5.1"}}, "ollama"),
    ("system", {}, "openai"),
]


@pytest.mark.parametrize(("owner", "gets", "profile"), KINDS, ids=[k[2] for k in KINDS])
def test_the_probe_names_the_server_and_how_it_knows(fault_server: Server, owner: str, gets: dict[str, object],
                                                     profile: str) -> None:
    server, base_url = fault_server
    server.owned_by, server.gets = owner, gets
    llm = open_model("openai:m", base_url=base_url, api_key="k")
    setup = llm.setup  # type: ignore[attr-defined]
    assert setup.profile.name == profile and setup.detection.fallback is None
    assert f"owned_by {owner!r}" in setup.detection.how
    assert all(path in setup.detection.how for path in gets)
    assert server.bodies == []  # the probe only reads (GET)


def test_llama_server_scores_chat_with_the_template_its_props_publish(fault_server: Server) -> None:
    server, base_url = fault_server
    server.owned_by, server.gets = KINDS[1][0], KINDS[1][1]
    llm = open_model("openai:m", base_url=base_url, api_key="k")
    setup = llm.setup  # type: ignore[attr-defined]
    assert setup.template is not None and setup.template.bos_token == "<s>"
    assert llm.capabilities.chat_scoring and llm.capabilities.grammar and setup.scoring == "next-token"


def test_a_probe_that_cannot_tell_falls_back_to_the_plain_profile_and_says_so(
        fault_server: Server, caplog: pytest.LogCaptureFixture) -> None:
    server, base_url = fault_server
    server.owned_by = "someone-else"
    with caplog.at_level(logging.WARNING, logger="statebound.llm.servers"):
        llm = open_model("openai:m", base_url=base_url, api_key="secret-key-12345")
        capabilities = llm.capabilities
    assert not (capabilities.scoring or capabilities.grammar) and capabilities.top_logprobs == 20
    assert "no endpoint of a known server answered" in caplog.text and "profile=NAME" in caplog.text
    assert "secret-key-12345" not in caplog.text


def test_a_named_profile_sends_no_probe_and_options_win_over_it(fault_server: Server) -> None:
    server, base_url = fault_server
    server.owned_by = "someone-else"  # a probe would fall back
    server.play(OK)
    llm = open_model("openai:m", base_url=base_url, api_key="k", profile="llama-cpp-python", tool_calls="native")
    setup = llm.setup  # type: ignore[attr-defined]
    assert (setup.grammar_field, setup.response_format, setup.tool_calls) == ("grammar", "json_object", "native")
    assert [how for name, _, how in setup.report() if name.startswith("tool calls")] == ["the option given"]
    complete_sync(llm, chat(("user", "hi"), grammar='root ::= "a"', max_tokens=2))
    assert server.bodies[0]["grammar"] == 'root ::= "a"'


def test_vllm_is_sent_a_choice_as_its_own_list_and_other_grammars_nested(fault_server: Server) -> None:
    server, base_url = fault_server
    server.play(OK, OK)
    llm = open_model("openai:m", base_url=base_url, api_key="k", profile="vllm")
    complete_sync(llm, chat(("user", "capital?"), grammar='root ::= "Paris" | "Berlin"', max_tokens=4))
    complete_sync(llm, chat(("user", "capital?"), grammar='root ::= "Pa" [a-z]+', max_tokens=4))
    assert server.bodies[0]["structured_outputs"] == {"choice": ["Paris", "Berlin"]}
    assert server.bodies[1]["structured_outputs"] == {"grammar": 'root ::= "Pa" [a-z]+'}


@pytest.mark.parametrize(("options", "error"), [
    ({"profile": "vlm"}, "unknown server profile 'vlm' \\(did you mean vllm\\?\\)"),
    ({"profile": "ollama", "tool_calls": "grammar"}, "tool_calls='grammar'.*takes none: give grammar_field"),
    ({"profile": "openai", "scoring": "next-token"}, "needs the server's tokenize endpoint"),
    ({"profile": "llama-server", "scoring": "prompt-logprobs"}, "is vLLM's"),
    ({"scoring": "sometimes"}, "scoring must be one of true, false, next-token"),
])
def test_impossible_combinations_are_refused_when_opened(fault_server: Server, options: dict[str, object],
                                                         error: str) -> None:
    _, base_url = fault_server
    with pytest.raises(DefinitionError, match=error):
        open_model("openai:m", base_url=base_url, api_key="k", **options)


def test_a_grammar_on_a_server_without_a_grammar_field_is_refused_before_sending(fault_server: Server) -> None:
    server, base_url = fault_server
    llm = open_model("openai:m", base_url=base_url, api_key="k", profile="ollama")
    with pytest.raises(UnsupportedFeature, match=r"\(ollama profile\) takes no grammar"):
        complete_sync(llm, Request(prompt="Is it?", grammar='root ::= " yes" | " no"'))
    assert server.bodies == []


@pytest.mark.integration
@pytest.mark.skipif(llama_cpp_missing() is not None, reason="llama-cpp-python is not installed")
def test_statebound_models_probe_prints_each_capability_and_how(llama_server: str) -> None:
    done = subprocess.run([str(Path(sys.executable).with_name("statebound")), "models", "--probe", llama_server],
                          capture_output=True, text=True, timeout=120, check=False,
                          env={**os.environ, "COLUMNS": "200"})
    assert done.returncode == 0, done.stderr
    assert "llama-cpp-python's server" in done.stdout and "POST /extras/tokenize answered" in done.stdout
    assert "next-token, text prompts and chat messages" in done.stdout and "the GGUF file" in done.stdout
    assert done.stderr == ""


def test_scripted_tokenize_reply_shape_is_read(fault_server: Server) -> None:
    """llama-cpp-python's probe confirms the server by its tokenize endpoint (a POST)."""
    server, base_url = fault_server
    server.owned_by = "me"
    server.play(Reply(body=json.dumps({"tokens": [1]}).encode()))
    llm = open_model("openai:m", base_url=base_url, api_key="k")
    assert llm.setup.profile.name == "llama-cpp-python"  # type: ignore[attr-defined]
    assert server.bodies == [{"input": "a"}]
