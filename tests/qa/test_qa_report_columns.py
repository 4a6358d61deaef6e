"""`statebound eval gsm8k|hotpotqa` and `statebound report` print the QA columns (EM, F1, monitor counts)."""

import json

from typer.testing import CliRunner

from statebound.cli.app import app

runner = CliRunner()

GSM8K_REPLY = " 16 - 3 - 4 = 9 eggs, 9 * 2 = 18.\n[Answer] 18\n"  # the first problem's gold is 18
# The first distractor question (gold: Gesellschaft mit beschränkter Haftung); the early [Answer]
# is a violation the monitor corrects (forcing [Thought]), and the final answer scores F1 6/7.
HOTPOT_REPLIES = [
    "Thought] Search it.\n[Action] Search\n[Action Input] VIVA Media\n[Observation]",
    "Answer] too early",
    " Look it up.\n[Action] Lookup\n[Action Input] GmbH\n[Observation]",
    "Final Thought] GmbH.\n[Answer] Gesellschaft mit beschränkter\n",
]


def _eval(benchmark, agent, replies, out):
    args = ["eval", benchmark, "--agent", agent, "--model", "scripted",
            "--model-option", f"replies={json.dumps(replies)}", "-O", "limit=1", "-O", "k=1",
            "--max-turns", "6", "--no-progress", "--no-plots", "--out", str(out)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    return result.output


def test_eval_prints_the_qa_columns(tmp_path):
    gsm = _eval("gsm8k", "cot", [GSM8K_REPLY], tmp_path / "gsm")
    assert "| Avg c-token | Violations/q | Corrections/q | Tool calls/q | Over context | SR 95% CI |" in gsm
    assert "| cot | scripted | 1 | 100.00 |" in gsm and "| 0.00 | 0.00 | 0.00 | 0 | 20.7-100.0 | 0 |" in gsm
    assert "EM %" not in gsm  # GSM8K accuracy is SR %

    hotpot = _eval("hotpotqa", "react", HOTPOT_REPLIES, tmp_path / "hotpot")
    assert "| EM % | F1 % | Violations/q | Corrections/q | Tool calls/q | Over context |" in hotpot
    assert "| 0.00 | 85.71 | 1.00 | 1.00 | 2.00 | 0 | 0.0-79.3 | 0 |" in hotpot


def test_report_compares_gsm8k_and_hotpotqa_side_by_side(tmp_path):
    _eval("gsm8k", "cot", [GSM8K_REPLY], tmp_path / "gsm")
    _eval("hotpotqa", "react", HOTPOT_REPLIES, tmp_path / "hotpot")
    out = tmp_path / "both"
    result = runner.invoke(app, ["report", str(tmp_path / "gsm"), str(tmp_path / "hotpot"),
                                 "--out", str(out), "--no-plots"])
    assert result.exit_code == 0, result.output
    header = "| Avg c-token | Violations/q | Corrections/q | Tool calls/q | Over context | EM % | F1 % | SR 95% CI |"
    assert header in result.output
    # gsm8k episodes store em/f1 too (both = the number's correctness), so its row fills them
    assert "| 0.00 | 0.00 | 0.00 | 0 | 100.00 | 100.00 | 20.7-100.0 | 0 |" in result.output
    assert "| 1.00 | 1.00 | 2.00 | 0 | 0.00 | 85.71 | 0.0-79.3 | 0 |" in result.output
    document = json.loads((out / "report.json").read_text())
    extras = {row["group"]["run"]: row["extra"] for row in document["main"]}
    assert extras["gsm"]["f1"] == 100.0 and extras["hotpot"]["violations"] == 1.0
