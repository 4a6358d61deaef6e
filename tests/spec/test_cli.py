from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from statebound.cli.app import app

runner = CliRunner()


def test_check_bundled_spec_passes_with_a_note(tmp_path: Path) -> None:
    result = runner.invoke(app, ["spec", "check", "react-paper"])
    assert result.exit_code == 0
    assert "info: unbounded loop" in result.output and "0 error(s), 0 warning(s), 1 info" in result.output
    assert runner.invoke(app, ["spec", "check", "react-paper", "--strict"]).exit_code == 0  # notes do not fail it
    weak = tmp_path / "weak.spec"
    weak.write_text('(define a (:states (A (:text "Thought:"))) (:behavior (next A)))')
    assert runner.invoke(app, ["spec", "check", str(weak)]).exit_code == 0
    assert runner.invoke(app, ["spec", "check", str(weak), "--strict"]).exit_code == 1  # warnings do


def test_check_reports_errors_with_position(tmp_path: Path) -> None:
    bad = tmp_path / "bad.spec"
    bad.write_text('(define a (:states (A (:text "[A]")) (B (:text "[B]")))\n (:behavior (next (until_0 B A))))')
    result = runner.invoke(app, ["spec", "check", str(bad)])
    assert result.exit_code == 1
    assert f"{bad}:1:38: error: state 'B' appears in :behavior but no run can reach it" in result.output


def test_parse_error_exits_non_zero(tmp_path: Path) -> None:
    bad = tmp_path / "bad.spec"
    bad.write_text('(define a (:states (A (:text "[A]"))) (:behavior (next A Z)))')
    result = runner.invoke(app, ["spec", "check", str(bad)])
    assert result.exit_code == 1 and "1:58: unknown state 'Z'" in result.output


def test_draw_writes_mermaid_and_dot(tmp_path: Path) -> None:
    result = runner.invoke(app, ["spec", "draw", "cot", "--out-dir", str(tmp_path)])
    assert result.exit_code == 0
    assert (tmp_path / "cot-agent.mmd").read_text().startswith("stateDiagram-v2")
    assert "digraph" in (tmp_path / "cot-agent.dot").read_text()


def test_show_and_validate_examples(tmp_path: Path) -> None:
    shown = runner.invoke(app, ["spec", "show", "direct"])
    assert shown.exit_code == 0 and "0: Ques -> 1" in shown.output
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("[Question] q\n[Thought] t\n[Answer] a\n[Question] r\n[Answer] no\n")
    result = runner.invoke(app, ["spec", "validate-examples", "cot", str(prompt)])
    assert result.exit_code == 1
    assert f"{prompt}:5:1: example 2, line 5, column 1: found [Answer], expected [Thought]" in result.output
