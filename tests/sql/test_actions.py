from __future__ import annotations

from statebound.agents.sql.tools import extract_action, extract_code
from statebound.envs.sql.actions import ParsedAction, format_observation, parse_action


def test_submit_must_be_exact() -> None:
    assert parse_action("submit") == ParsedAction("submit")
    assert parse_action("submit now").kind == "invalid"


def test_execute_is_greedy_and_cut_at_semicolon() -> None:
    assert parse_action("execute[SELECT a[1] FROM t]") == ParsedAction("execute", "SELECT a[1] FROM t")
    assert parse_action("execute[SELECT 1; DROP TABLE t]") == ParsedAction("execute", "SELECT 1")
    assert parse_action("Action: execute[SHOW TABLES] please") == ParsedAction("execute", "SHOW TABLES")


def test_text_without_execute_is_invalid() -> None:
    assert parse_action("SELECT 1").kind == "invalid"


def test_observation_caps_rows_and_characters() -> None:
    rows = [(i,) for i in range(30)]
    assert format_observation(rows, max_chars=350, max_rows=25) == str(rows[:25])
    assert format_observation("x" * 400, max_chars=350, max_rows=25) == "x" * 350
    assert format_observation(None, max_chars=350, max_rows=25) == "None"


def test_extract_action_from_thought_action_replies() -> None:
    assert extract_action("Thought: look\nAction: execute[SHOW TABLES]") == "execute[SHOW TABLES]"
    assert extract_action("Thought 3: done\nAction 3: submit") == "submit"
    assert extract_action("Thought: ok\nAction: Submit.") == "submit"
    assert extract_action("no label execute[SELECT 1]") == "no label execute[SELECT 1]"
    two = "Thought: a\nAction: execute[SHOW TABLES]\nThought: b\nAction: execute[SELECT 1]"
    assert extract_action(two) == "execute[SHOW TABLES]\nThought: b"  # the first, as the authors' code


def test_extract_code_follows_upstream_sql_parser() -> None:
    assert extract_code("```sql\nSELECT name\nFROM t;\n```") == "SELECT name FROM t"
    assert extract_code("I will run SHOW TABLES; then more") == "SHOW TABLES"
    assert extract_code("no code here") is None
