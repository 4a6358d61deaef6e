"""The bundled question-answering datasets: GSM8K test (1319), HotpotQA distractor (100, with
paragraphs) and HotpotQA dev simplified (7405, no context)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any, Literal

from statebound.envs.qa.scoring import gsm8k_gold_number
from statebound.errors import DefinitionError

__all__ = ["HotpotSplit", "QAItem", "load_gsm8k", "load_hotpotqa"]

HotpotSplit = Literal["distractor", "dev"]


@dataclass(frozen=True, slots=True)
class QAItem:
    """One question with its gold answer (for GSM8K, the number after ``####`` as text)."""

    id: str
    question: str
    answer: str
    meta: Mapping[str, Any] = field(default_factory=dict)


def _data_text(*parts: str) -> str:
    return resources.files("statebound").joinpath("data", *parts).read_text(encoding="utf-8")


@cache
def load_gsm8k() -> tuple[QAItem, ...]:
    """All 1319 GSM8K test problems, ids ``gsm8k-0000`` ... in file order."""
    items = []
    for index, line in enumerate(_data_text("gsm8k", "test.jsonl").splitlines()):
        if line.strip():
            record = json.loads(line)
            gold = gsm8k_gold_number(record["answer"])
            items.append(
                QAItem(
                    id=f"gsm8k-{index:04d}",
                    question=record["question"],
                    answer=str(gold),
                    meta={"solution": record["answer"]},
                )
            )
    return tuple(items)


@cache
def load_hotpotqa(split: HotpotSplit = "distractor") -> tuple[QAItem, ...]:
    """HotpotQA questions: ``distractor`` (100, the tool corpus comes from them) or ``dev`` (7405)."""
    if split == "distractor":
        records = json.loads(_data_text("hotpotqa", "hotpot_distractor_100.json"))
        return tuple(
            QAItem(
                id=record["id"],
                question=record["question"],
                answer=record["answer"],
                meta={"type": record["type"], "level": record["level"],
                      "supporting": tuple(dict.fromkeys(record["supporting_facts"]["title"]))},
            )
            for record in records
        )
    if split == "dev":
        records = json.loads(_data_text("hotpotqa", "hotpot_dev_v1_simplified.json"))
        return tuple(
            QAItem(id=f"hotpot-dev-{i:04d}", question=r["question"], answer=r["answer"], meta={"type": r["type"]})
            for i, r in enumerate(records)
        )
    raise DefinitionError(f"unknown HotpotQA split {split!r}; choose 'distractor' (100, tools) or 'dev' (7405)")
