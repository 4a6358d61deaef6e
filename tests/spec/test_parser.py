from __future__ import annotations

import pytest

from statebound.errors import SpecError
from statebound.spec import BUNDLED, Next, StateRef, Until, bundled_text, load_bundled, parse

REACT = """\
; ReAct as printed in the paper
(define react-agent
  (:states
    (Ques (:text "[Question]"))
    (Tht (:text "[Thought]"))   # a hash comment
    (Obs (:text "[Observation]") (:flags :env-input))
    (Ans (:text "[Answer]")))
  (:behavior (next Ques (until_2_4 (next Tht Obs) Ans))))
"""


def test_parses_states_flags_and_bounded_until() -> None:
    spec = parse(REACT)
    assert spec.name == "react-agent"
    assert [s.name for s in spec.states] == ["Ques", "Tht", "Obs", "Ans"]
    assert spec.by_name["Obs"].env_input and not spec.by_name["Tht"].env_input
    assert spec.markers["[Thought]"] == "Tht"
    assert spec.behavior == Next((StateRef("Ques"), Until(Next((StateRef("Tht"), StateRef("Obs"))), StateRef("Ans"), 2, 4)))
    assert (spec.behavior.line, spec.behavior.column) == (8, 14)


def test_round_trip_through_text() -> None:
    spec = parse(REACT)
    again = parse(spec.to_text())
    assert again.states == spec.states and again.behavior == spec.behavior


@pytest.mark.parametrize("name", BUNDLED)
def test_bundled_specs_parse_and_compile(name: str) -> None:
    spec = load_bundled(name)
    automaton = spec.compile()
    assert automaton.valid_next([]) == {"Ques"}
    assert bundled_text(name).lstrip().startswith(";")


def test_pass_spec_follows_figure_5() -> None:
    automaton = load_bundled("pass").compile()
    assert automaton.accepts(["Ques", "Plan", "Act", "Act-Inp", "Act", "Act-Inp", "Sum", "Final-Tht", "Ans"])
    assert automaton.accepts(["Ques", "Final-Tht", "Ans"])
    assert automaton.valid_next(["Ques", "Plan", "Act", "Act-Inp"]) == {"Act", "Sum"}


def _error(text: str) -> SpecError:
    with pytest.raises(SpecError) as info:
        parse(text, source_name="t.spec")
    return info.value


def test_unbalanced_open_parenthesis_points_at_the_open() -> None:
    err = _error('(define a\n  (:states (A (:text "[A]")))\n  (:behavior (next A))')
    assert (err.line, err.column) == (1, 1)
    assert "never closed" in err.message and "expected 1 more ')'" in err.message


def test_stray_close_parenthesis() -> None:
    err = _error('(define a (:states (A (:text "[A]"))) (:behavior (next A))))')
    assert (err.line, err.column) == (1, 60)
    assert "unexpected ')'" in err.message


def test_unknown_state_in_formula() -> None:
    err = _error('(define a\n (:states (A (:text "[A]")))\n (:behavior (next A\n    Bee)))')
    assert (err.line, err.column) == (4, 5)
    assert "unknown state 'Bee'" in err.message and "expected one of A" in err.message
    assert str(err).startswith("t.spec:4:5:")


def test_unknown_flag() -> None:
    err = _error('(define a (:states (A (:text "[A]") (:flags :env-inputs))) (:behavior (next A)))')
    assert (err.line, err.column) == (1, 45)
    assert "unknown flag ':env-inputs'" in err.message and ":env-input" in err.message


def test_duplicate_state() -> None:
    err = _error('(define a (:states\n (A (:text "[A]"))\n (A (:text "[B]")))\n (:behavior (next A)))')
    assert (err.line, err.column) == (3, 3)
    assert "duplicate state 'A'" in err.message and "line 2, column 2" in err.message


def test_empty_marker() -> None:
    err = _error('(define a (:states (A (:text "  "))) (:behavior (next A)))')
    assert (err.line, err.column) == (1, 30)
    assert "empty marker" in err.message


def test_top_level_must_be_next() -> None:
    err = _error('(define a (:states (A (:text "[A]"))) (:behavior (or A A)))')
    assert (err.line, err.column) == (1, 50)
    assert "must begin with 'next'" in err.message


@pytest.mark.parametrize(
    ("behavior", "needle"),
    [
        ("(next (until A))", "exactly two arguments"),
        ("(next (until_3_1 A A))", "minimum 3 exceeds the maximum 1"),
        ("(next (always A A))", "exactly one argument"),
        ("(next (eventually A))", "unknown operator 'eventually'"),
        ("(next ())", "empty list"),
    ],
)
def test_formula_errors(behavior: str, needle: str) -> None:
    err = _error(f'(define a (:states (A (:text "[A]"))) (:behavior {behavior}))')
    assert err.line == 1 and err.column > 40
    assert needle in err.message


def test_missing_sections_and_markers() -> None:
    assert "missing section '(:behavior ...)'" in _error('(define a (:states (A (:text "[A]"))))').message
    assert "has no marker" in _error("(define a (:states (A)) (:behavior (next A)))").message
    assert "unterminated string" in _error('(define a (:states (A (:text "[A])))').message
    assert "empty spec" in _error("; only a comment\n").message


@pytest.mark.parametrize("name", ["react", "react-paper"])
def test_react_loop_bound_is_the_authors_five(name: str) -> None:
    loop = ["Tht", "Act", "Act-Inp", "Obs"]
    automaton = load_bundled(name).compile()
    assert automaton.accepts(["Ques", *loop * 5, "Final-Tht", "Ans"])
    sixth = automaton.accepts(["Ques", *loop * 6, "Final-Tht", "Ans"])
    assert sixth is (name == "react-paper")  # IBM's react.txt: until_5; the paper's figure: unbounded


def test_reflexion_loop_bounds_are_the_authors() -> None:
    inner = ["Tht", "Act", "Act-Inp", "Obs"]
    trial = [*inner * 3, "Final-Tht", "Prop-Ans", "Eval", "Ref"]
    automaton = load_bundled("reflexion").compile()
    assert automaton.accepts(["Ques", *trial * 2, "Ans"])
    assert not automaton.accepts(["Ques", *trial * 3, "Ans"])  # until_2
    assert not automaton.accepts(["Ques", *inner * 4, "Final-Tht", "Prop-Ans", "Eval", "Ref", "Ans"])  # until_3
    assert load_bundled("reflexion-paper").compile().accepts(["Ques", *trial * 3, "Ans"])
