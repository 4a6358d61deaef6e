from __future__ import annotations

from statebound.spec import (
    BUNDLED,
    check_spec,
    load_bundled,
    parse,
    to_dot,
    to_mermaid,
    validate_examples,
)
from statebound.spec.examples import check_run, transcript_conforms


def _codes(text: str) -> set[str]:
    return {d.code for d in check_spec(parse(text))}


def test_bundled_specs_have_no_errors() -> None:
    for name in BUNDLED:
        assert [d for d in check_spec(load_bundled(name)) if d.severity == "error"] == []


def test_bundled_specs_pass_their_own_strict_check() -> None:
    from typer.testing import CliRunner

    from statebound.cli.app import app

    for name in BUNDLED:
        result = CliRunner().invoke(app, ["spec", "check", name, "--strict"])
        assert result.exit_code == 0 and " 0 error(s), 0 warning(s)" in result.output, result.output


def test_unbounded_loop_is_a_note_with_position() -> None:
    (diagnostic,) = check_spec(load_bundled("react-paper"))
    assert (diagnostic.severity, diagnostic.code) == ("info", "unbounded-loop")
    assert (diagnostic.line, diagnostic.column) == (16, 7)
    bounded = parse('(define a (:states (A (:text "[A]")) (B (:text "[B]"))) (:behavior (next (until_3 A B))))')
    assert check_spec(bounded) == []


def test_unused_and_unreachable_states() -> None:
    text = ('(define a (:states (A (:text "[A]")) (B (:text "[B]")) (C (:text "[C]")))\n'
            " (:behavior (next (until_0 B A))))")
    diagnostics = {d.code: d for d in check_spec(parse(text))}
    assert diagnostics["unused-state"].severity == "warning" and "'C'" in diagnostics["unused-state"].message
    assert diagnostics["unreachable-state"].severity == "error" and "'B'" in diagnostics["unreachable-state"].message


def test_weak_markers() -> None:
    assert "marker-prefix" in _codes('(define a (:states (A (:text "[A")) (B (:text "[AB]"))) (:behavior (next A B)))')
    assert "marker-collision" in _codes('(define a (:states (A (:text "Thought:"))) (:behavior (next A)))')
    for marker, suggested in (("Thought:", "'[Thought]'"), ("[A", "'[A]'"), ("[]", "'[A]'")):
        (found,) = [d for d in check_spec(parse(f'(define a (:states (A (:text "{marker}"))) (:behavior (next A)))'))
                    if d.code == "marker-collision"]
        assert found.message.endswith(f"such as {suggested}"), found.message
    assert "marker-whitespace" in _codes('(define a (:states (A (:text " [A]"))) (:behavior (next A)))')
    assert "marker-duplicate" in _codes('(define a (:states (A (:text "[A]")) (B (:text "[A]"))) (:behavior (next A B)))')


def test_empty_run_warning() -> None:
    assert "empty-run" in _codes('(define a (:states (A (:text "[A]"))) (:behavior (next (always A))))')


def test_diagrams_name_every_edge() -> None:
    spec = load_bundled("react-paper")
    mermaid, dot = to_mermaid(spec), to_dot(spec)
    assert mermaid.startswith("stateDiagram-v2") and "n6 --> n1 : [Observation]" in mermaid
    assert 'n1 -> n3 [label="[Final Thought]"]' in dot and "doublecircle" in dot
    assert dot.count("->") == 1 + sum(len(out) for out in spec.compile().edges.values())


PROMPT = """Answer with tools.

[Question] What is 2 + 2?
[Thought] Add them.
[Action] Calculator
[Action Input] 2 + 2
[Observation] 4
[Final Thought] It is 4.
[Answer] 4

[Question] What is 3 * 3?
[Thought] Multiply.
[Action Input] 3 * 3
[Observation] 9
[Answer] 9

[Question] What is 1 + 1?
[Thought]"""


def test_validate_examples_reports_line_column_and_expected_markers() -> None:
    (deviation,) = validate_examples(load_bundled("react"), PROMPT)
    assert (deviation.example, deviation.line, deviation.column) == (2, 13, 1)
    assert deviation.found == "Act-Inp" and deviation.expected == ("[Action]",)
    assert "found [Action Input], expected [Action]" in str(deviation)


def test_closed_last_example_must_complete() -> None:
    spec = load_bundled("react")
    fixed = PROMPT.replace("[Thought] Multiply.\n", "[Thought] Multiply.\n[Action] Calculator\n")
    fixed = fixed.replace("[Observation] 9\n[Answer] 9", "[Observation] 9\n[Final Thought] 9.\n[Answer] 9")
    assert validate_examples(spec, fixed) == []
    (open_end,) = validate_examples(spec, fixed, last_may_be_open=False)
    assert open_end.example == 3 and open_end.expected == ("[Action]",)


def test_text_after_final_line_and_transcript_conformance() -> None:
    spec = load_bundled("cot")
    assert transcript_conforms(spec, "[Question] q\n[Thought] t\n[Answer] a\n")
    assert not transcript_conforms(spec, "[Question] q\n[Thought] t\n[Answer] a\nmore text\n")
    assert not transcript_conforms(spec, "preamble [Question] q\n[Thought] t\n[Answer] a")
    (deviation,) = check_run(spec, "[Question] q\n[Answer] a")
    assert deviation.found == "Ans" and deviation.expected == ("[Thought]",)
