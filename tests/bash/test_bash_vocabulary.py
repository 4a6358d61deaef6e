"""The scoped Bash machine's data: stage templates from gold commands, the leave-one-out
vocabulary of the bundled tasks, what a question supplies to the slots, and slot filling."""

from __future__ import annotations

import pytest

from statebound.agents.bash.reading import (
    extensions,
    named_or_listed,
    named_paths,
    numbers,
    patterns,
    quoted,
    slot_values,
)
from statebound.agents.bash.scoped import MAX_FILLS, fill
from statebound.agents.bash.vocabulary import (
    Vocabulary,
    bundled_vocabulary,
    find_clauses,
    split_pipeline,
    stage_template,
    vocabulary,
)
from statebound.envs.bash import load_tasks


@pytest.mark.parametrize(("command", "stages"), [
    ("find /t -name '*.c' | xargs cat | wc -l", ["find /t -name '*.c'", "xargs cat", "wc -l"]),
    ("grep 'a|b' f | sort", ["grep 'a|b' f", "sort"]),  # a quoted pipe is not a stage break
    ("find /t -exec grep x {} \\; | wc -l", ["find /t -exec grep x {} \\;", "wc -l"]),
    ("comm -23 <(sort a | uniq) <(sort b)", ["comm -23 <(sort a | uniq) <(sort b)"]),  # inside ( )
    ("x=$(ls) && echo $x", None),
    ("find / -name x > out.txt", None),
    ("a || b", None),
    ("job &", None),
])
def test_pipelines_split_at_top_level_pipes_only(command, stages):
    assert split_pipeline(command) == stages


@pytest.mark.parametrize(("stage", "question", "head", "template"), [
    ("find /testbed -name '*.php' -type f", "php files in /testbed", True, "find @PATH@ -name @PATTERN@ -type f"),
    ("find /testbed -type f -mtime +7", "older than 7 days", True, "find @PATH@ -type f -mtime +@N@"),
    ("head -5", "the 5 largest files", False, "head -@N@"),
    ("head -n 1", "the first line", False, "head -n 1"),  # 1 is not in the question: kept
    ("xargs grep -l FAIL", "files that match 'FAIL'", False, "xargs grep -l @TEXT@"),
    ("find /t -exec chmod 755 {} \\;", "make them 755", True, "find @PATH@ -exec chmod 755 {} \\;"),
    ("awk '{print $1}'", "the first field", False, "awk '{print $1}'"),
    ("md5sum /testbed/*.java", "the .java files in /testbed", True, "md5sum @PATH@/@PATTERN@"),
    ("cut -d/ -f1", "the last part", False, "cut -d/ -f1"),
    ("cat /a/b", "print /a/b", False, None),  # a pipe stage takes no path
    ("diff /a /b", "compare /a and /b", True, None),  # two paths: not slottable
    ("cat $(ls)", "anything", True, None),
])
def test_a_stage_becomes_a_template_with_the_tasks_details_slotted(stage, question, head, template):
    assert stage_template(stage, question, head=head) == template


def test_a_vocabulary_keeps_each_template_once_in_first_seen_order():
    found = vocabulary([("count *.c lines in /a", "find /a -name '*.c' | xargs cat | wc -l"),
                        ("count *.h lines in /b", "find /b -name '*.h' | xargs cat | wc -l"),
                        ("list /c", "ls /c"), ("joined", "ls && pwd")])
    assert found == Vocabulary(heads=("find @PATH@ -name @PATTERN@", "ls @PATH@"), pipes=("xargs cat", "wc -l"))
    assert found.programs == ("find", "ls")


def test_find_heads_are_cut_into_clauses():
    template = "find @PATH@ -type f -mtime -@N@ \\( -name @PATTERN@ -o -print0 \\) -exec grep -l 'a b' {} \\; -delete"
    assert find_clauses(template) == ["-type f", "-mtime -@N@", "\\(", "-name @PATTERN@", "-o", "-print0", "\\)",
                                      "-exec grep -l 'a b' {} \\;", "-delete"]
    assert find_clauses("find -name @PATTERN@") is None and find_clauses("ls @PATH@") is None
    found = Vocabulary(heads=("find @PATH@ -type f -name @PATTERN@", "ls @PATH@", "find @PATH@ -type f -empty"), pipes=())
    assert found.clauses == ("-type f", "-name @PATTERN@", "-empty")


def test_the_bundled_vocabulary_never_offers_a_task_its_own_gold_stages():
    everything = bundled_vocabulary()
    assert "uniq -Dw32" in everything.pipes  # only task 3-35's gold command has it
    without = bundled_vocabulary(leave_out="3-35")
    assert "uniq -Dw32" not in without.pipes
    assert set(without.heads) <= set(everything.heads) and "xargs cat" in without.pipes
    assert len({task.id for task in load_tasks()}) == 200


def test_the_question_supplies_paths_strings_numbers_and_patterns():
    question = "Copy the 5 largest \"*.log\" files under '/var/app' to backup/old and grep 'FAIL' in .txt files"
    assert quoted(question) == ["*.log", "/var/app", "FAIL"]
    assert named_paths(question) == ["/var/app", "backup/old", "/backup/old"]
    assert numbers(question) == ["5"]
    assert patterns(question) == ["*.log", "*.txt"]
    assert patterns("Count the lines of all PHP files", known_extensions={"php"}) == ["*.php"]
    assert patterns("Print /a/long.txt", known_extensions={"txt"}) == []  # a path's extension is no pattern
    assert extensions(["/t/a.php", "/t/dir", "/t/.hidden", "/t/b.tar.gz"]) == {"php", "gz"}
    values = slot_values(question, ["/var/app/x.log"])
    assert values.texts == ("FAIL",) and values.paths[-1] == "/var/app/x.log"


def test_a_number_is_read_with_its_unit_the_way_the_vocabulary_slots_it():
    question = "Remove files greater than 1KB in /system, the 3 largest, not file2 or version 2.5"
    assert numbers(question) == ["1", "3"]
    assert stage_template("find /system -size +1k -delete", question, head=True) == "find @PATH@ -size +@N@k -delete"
    assert fill("find @PATH@ -size +@N@k -delete", slot_values(question), "/system")[0] == "find /system -size +1k -delete"


def test_filling_a_template_tries_each_value_of_each_slot_and_needs_every_slot():
    values = slot_values('Find "a*" and "b*" files in /x modified 3 or 9 days ago')
    assert fill("find @PATH@ -name @PATTERN@", values, "/x") == ["find /x -name 'a*'", "find /x -name 'b*'"]
    assert fill("find @PATH@ -name @PATTERN@", values, None) == []  # no path chosen
    assert fill("head -@N@", values, None) == ["head -3", "head -9"]
    assert fill("md5sum @PATH@/@PATTERN@", values, "/x") == ["md5sum /x/a*", "md5sum /x/b*"]  # for the shell
    assert fill("grep @TEXT@", values, None) == []  # the question quotes only patterns
    assert len(fill("find @PATH@ -name @PATTERN@ -mtime +@N@ -o -name @PATTERN@", values, "/x")) == MAX_FILLS


def test_the_path_candidates_are_the_paths_the_question_names_written_or_listed():
    listed = ["/root", "/testbed", "/testbed/dir1", "/testbed/dir2", "/testbed/dir2/subdir1", "/testbed/a.txt"]
    assert named_or_listed("Compress files in the testbed directory tree", listed) == ["/testbed"]
    assert named_or_listed('Print paths under "testbed/dir1" compared to "testbed/dir2"', listed) == [
        "/testbed/dir1", "/testbed/dir2"]
    assert named_or_listed("Archive /testbed/dir1 to /backup.tar", listed) == ["/testbed/dir1", "/backup.tar"]
    assert named_or_listed('Extract the host from "http://www.google.com"', listed) == []  # no path: none
