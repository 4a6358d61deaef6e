"""The question-reading rules the SQL, Bash and QA machines share (agents/question_text.py), on real
questions from the bundled benchmarks (InterCode-SQL task ids, InterCode-Bash ids, HotpotQA)."""

from __future__ import annotations

import pytest

from statebound.agents.question_text import (
    BASH_QUOTES,
    QA_NOT_NAMES,
    QA_QUOTES,
    QUESTION_WORDS,
    SQL_NOT_VALUES,
    SQL_QUOTES,
    quoted_strings,
    singular,
    singular_forms,
    whole_number,
    without_quoted,
)

SQL = [  # (InterCode-SQL task, question, what it quotes)
    (19, 'What are flight numbers of flights arriving at City "Aberdeen"?', ["Aberdeen"]),
    (38, "List the name and date the battle that has lost the ship named 'Lettice' and the ship named 'HMS Atalanta'",
     ["Lettice", "HMS Atalanta"]),
    (57, 'List the title of all cartoon directed by "Ben Jones" or "Brandon Vietti".', ["Ben Jones", "Brandon Vietti"]),
    (81, "Find all airlines that have flights from both airports 'APG' and 'CVO'.", ["APG", "CVO"]),
]
QA = [  # HotpotQA: double and curly quotes only, an apostrophe inside a title kept
    ('In what year was the singer who popularized "I\'ll Keep the Lovelight Burning" born?',
     ["I'll Keep the Lovelight Burning"]),
    ('Which movie was filmed first "The Guest" or "You\'re Next"?', ["The Guest", "You're Next"]),
    ("Where is the company that distributed XXXTentacion's single \"Revenge\" based?", ["Revenge"]),
]
BASH = [  # InterCode-Bash: quotes that start and end a word, backquotes too
    ("1-0", 'Calculate a list of duplicate md5 sum hashes for all the ".java" files in the /testbed directory', [".java"]),
    ("1-9", "Check if current shell is running within a 'screen' process.", ["screen"]),
    ("1-15", "Copies all files with \"FooBar\" in the path under the '/testbed/dir1' directory to the "
     "'/testbed/dir3/subdir1/subsubdir1/tmp' directory.", ["FooBar", "/testbed/dir1", "/testbed/dir3/subdir1/subsubdir1/tmp"]),
    ("made up", "Print `date` and 'don't stop' in capitals", ["date", "don't stop"]),
    ("4-14", 'Remove leading and trailing spaces or tabs from "  Hello world!\t  "', ["  Hello world!\t  "]),
]


@pytest.mark.parametrize(("task", "question", "quoted"), SQL)
def test_sql_questions_quote_with_double_single_and_curly_marks(task: int, question: str, quoted: list[str]) -> None:
    assert quoted_strings(question, SQL_QUOTES) == quoted
    assert not any(text in without_quoted(question, SQL_QUOTES) for text in quoted)


@pytest.mark.parametrize(("question", "quoted"), QA)
def test_hotpotqa_questions_keep_apostrophes_inside_titles(question: str, quoted: list[str]) -> None:
    assert quoted_strings(question, QA_QUOTES) == quoted


@pytest.mark.parametrize(("task", "question", "quoted"), BASH)
def test_bash_questions_quote_whole_words(task: str, question: str, quoted: list[str]) -> None:
    assert quoted_strings(question, BASH_QUOTES, as_word=True) == quoted


@pytest.mark.parametrize(("word", "forms"), [
    ("flights", {"flights", "flight"}), ("classes", {"classes", "classe", "class"}),
    ("countries", {"countries", "countrie", "countri", "country"}), ("address", {"address"}), ("is", {"is"}),
    ("Airports", {"airports", "airport"}),
])
def test_singular_forms_cover_s_es_and_ies(word: str, forms: set[str]) -> None:
    assert singular_forms(word) == forms


@pytest.mark.parametrize(("word", "one"), [("countries", "country"), ("airports", "airport"), ("address", "address"),
                                           ("bus", "bus"), ("Types", "type")])
def test_singular_picks_one_form(word: str, one: str) -> None:
    assert singular(word) == one and one in singular_forms(word)


def test_the_stop_lists_share_the_question_words() -> None:
    assert QUESTION_WORDS <= SQL_NOT_VALUES and QUESTION_WORDS <= QA_NOT_NAMES
    assert "id" in SQL_NOT_VALUES and "their" in QA_NOT_NAMES and "their" not in SQL_NOT_VALUES


NUMBERS = [  # (InterCode-SQL task, question, the whole numbers it gives, in digits or spelt out)
    (69, "What are the names of the teachers who teach at least two courses?", [2]),
    (75, "What are the names of tournaments that have more than 10 matches?", [10]),
    (372, "Give the ids of documents that have between one and two paragraphs.", [1, 2]),
    (590, "Show all template type codes with less than three templates.", [3]),
]


@pytest.mark.parametrize(("task", "question", "expected"), NUMBERS)
def test_whole_numbers_of_real_questions(task: int, question: str, expected: list[int]) -> None:
    assert [n for word in question.rstrip("?.").split() if (n := whole_number(word)) is not None] == expected


def test_whole_number_reads_digits_and_the_words_one_to_ten_only() -> None:
    assert [whole_number(w) for w in ("Ten", "007", "eleven", "2.5", "twice", "")] == [10, 7, None, None, None, None]


def test_sql_comparisons_and_gsm8k_quantities_read_the_shared_number_words() -> None:
    from statebound.agents.qa.quantities import quantities
    from statebound.agents.sql.reading import Comparison, read_question

    assert read_question(NUMBERS[3][1]).numbers == (Comparison("<", "3", "codes with less than three templates"),)
    # GSM8K test problem 6: "twice" is GSM8K's own word, on top of the shared ones
    problem = ("Toulouse has twice as many sheep as Charleston. Charleston has 4 times as many sheep as Seattle. "
               "How many sheep do Toulouse, Charleston, and Seattle have together if Seattle has 20 sheep?")
    assert quantities(problem) == [2, 4, 20]
    assert quantities("Three friends share a dozen eggs.") == [3, 12]
