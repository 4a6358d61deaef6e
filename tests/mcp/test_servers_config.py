"""MCP servers declared in the ``mcpServers`` config shape, and a person's answer to a server's
elicitation: what is read, and the one-line error for each mistake."""

from __future__ import annotations

import json

import mcp_types as types
import pytest

from statebound.errors import DefinitionError
from statebound.mcp import MCPServer, load_servers, parse_servers, servers_in_use, use_servers
from statebound.mcp.elicitation import answer, question
from statebound.mcp.tools import repeatable


def test_stdio_and_http_servers_with_variables_from_the_environment():
    servers = parse_servers({"mcpServers": {
        "files": {"command": "npx", "args": ["server-filesystem", "${HOME_DIR}/data"], "env": {"TOKEN": "${TOKEN}"},
                  "allow": ["read_text_file"], "timeout": 5, "maxResultChars": 300},
        "tickets": {"type": "http", "url": "https://tickets.example/mcp",
                    "headers": {"Authorization": "Bearer ${TOKEN}"}}}},
        environ={"HOME_DIR": "/home/ann", "TOKEN": "tk-0123456789abcdef"})
    files, tickets = servers["files"], servers["tickets"]
    assert (files.command, files.args, files.allow, files.timeout, files.max_result_chars) == (
        "npx", ("server-filesystem", "/home/ann/data"), ("read_text_file",), 5, 300)
    assert tickets.url == "https://tickets.example/mcp" and tickets.headers == {"Authorization": "Bearer tk-0123456789abcdef"}
    assert "tk-0123456789abcdef" not in repr(tickets) + repr(files)
    assert tickets.redact("refused Bearer tk-0123456789abcdef") == "refused ***"


@pytest.mark.parametrize(("data", "message"), [
    ({}, 'has no "mcpServers" object'),
    ({"mcpServers": {"a": "npx"}}, "server 'a' is not an object with a command or a url"),
    ({"mcpServers": {"a": {"command": "x", "cmd": "y"}}}, "unknown key 'cmd'; the keys are allow, args, command,"),
    ({"mcpServers": {"a": {}}}, "give a command (a server run over stdio) or a url (streamable HTTP), one of the two"),
    ({"mcpServers": {"a": {"command": "x", "url": "http://h/mcp"}}}, "one of the two"),
    ({"mcpServers": {"a": {"url": "ftp://h"}}}, "url 'ftp://h' is not an http:// or https:// URL"),
    ({"mcpServers": {"a": {"type": "sse", "url": "http://h"}}}, "type 'sse' is not one statebound speaks"),
    ({"mcpServers": {"a": {"command": "x", "args": "-y"}}}, "args is a list of strings"),
    ({"mcpServers": {"a": {"command": "x", "timeout": 0}}}, "timeout is a positive number, not 0"),
    ({"mcpServers": {"a": {"command": "x", "env": {"K": "${NOT_SET_HERE}"}}}},
     "env.K uses ${NOT_SET_HERE}, and the environment has no NOT_SET_HERE"),
])
def test_each_mistake_in_a_config_is_one_line_naming_it(data, message):
    with pytest.raises(DefinitionError) as refused:
        parse_servers(data, where="mcp.json", environ={})
    assert message in str(refused.value) and "\n" not in str(refused.value)


def test_config_files_that_cannot_be_read(tmp_path):
    with pytest.raises(DefinitionError, match="cannot read the MCP config .*missing.json"):
        load_servers(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{\"mcpServers\": ")
    with pytest.raises(DefinitionError, match="bad.json is not JSON \\(line 1, column 16"):
        load_servers(tmp_path / "bad.json")
    (tmp_path / "ok.json").write_text(json.dumps({"mcpServers": {"time": {"command": "mcp-server-time"}}}))
    assert load_servers(tmp_path / "ok.json")["time"].command == "mcp-server-time"


def test_use_servers_is_where_a_name_is_found():
    time = MCPServer.stdio("time", "mcp-server-time")
    assert servers_in_use() == {}
    with use_servers([time]):
        assert servers_in_use() == {"time": time}
    assert servers_in_use() == {}


@pytest.mark.parametrize(("hints", "expected"), [
    (None, False),
    ({"read_only_hint": True}, True),
    ({"idempotent_hint": True, "destructive_hint": False}, True),
    ({"idempotent_hint": True, "destructive_hint": True}, False),  # write_file: idempotent, still destructive
    ({"idempotent_hint": True}, False),  # destructive unless it says otherwise
    ({"destructive_hint": False}, False),
])
def test_annotations_say_whether_a_call_may_run_twice(hints, expected):
    assert repeatable(None if hints is None else types.ToolAnnotations(**hints)) is expected


FORM = types.ElicitRequestFormParams(message="Who are you?", requested_schema={
    "type": "object", "required": ["name"], "properties": {
        "name": {"type": "string"}, "age": {"type": "integer", "default": 30},
        "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
        "pets": {"type": "array", "items": {"enum": ["cat", "dog"]}}}})


def test_a_persons_answer_to_a_form():
    assert "answer with a JSON object of name: a string; age: an integer, default 30; status: one of active, " \
           "inactive, default \"active\"; pets: a list of cat, dog" in question(FORM)
    accepted = answer(FORM, '{"name": "Ann", "pets": ["cat"]}')
    assert accepted.action == "accept" and accepted.content == {"name": "Ann", "age": 30, "status": "active",
                                                                 "pets": ["cat"]}
    assert answer(FORM, " Decline ").action == "decline" and answer(FORM, "cancel").action == "cancel"
    assert answer(FORM, '{"age": 3}') == "give name"
    assert answer(FORM, '{"name": "Ann", "age": "old"}') == "age: 'old' is not an integer"
    assert answer(FORM, '{"name": "Ann", "status": "gone"}') == "status: 'gone' is not one of active, inactive"
    assert answer(FORM, '{"name": "Ann", "pets": ["fish"]}') == "pets: 'fish' is not one of cat, dog"
    assert answer(FORM, '{"nick": "A"}') == "there is no field 'nick'; the fields are name, age, status, pets"
    assert answer(FORM, "Ann") == "answer with a JSON object of the fields name, age, status, pets"


def test_a_one_field_form_takes_the_bare_value_and_a_url_takes_accept():
    one = types.ElicitRequestFormParams(message="How many?", requested_schema={
        "type": "object", "properties": {"count": {"type": "integer"}}})
    assert question(one) == "How many? (answer with count: an integer; or 'decline', 'cancel')"
    assert answer(one, "7").content == {"count": 7}
    url = types.ElicitRequestURLParams(message="Sign in.", url="https://auth.example/x", elicitation_id="e1")
    assert "Open https://auth.example/x, then answer 'accept'" in question(url)
    assert answer(url, "accept").action == "accept" and answer(url, "ok") == "answer 'accept', 'decline' or 'cancel'"
