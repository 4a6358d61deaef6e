"""Prompts of the InterCode-Bash agents.

The StateFlow prompts are the paper's Bash prompts (appendix A.1, Table 2), verbatim except for PDF
extraction artefacts: line breaks restored, typographic quotes and backticks made plain, braces put
back (``awk '{print $1}'``, ``-exec md5sum {} +``), and the template fields the PDF printed as
``self.setting`` / ``self.language`` filled in as upstream InterCode fills them (``Bourne Shell``,
``BASH``).

The ReAct and Plan & Solve prompts follow upstream InterCode's templates in shape (an introduction,
few-shot demonstrations, then ``Question: ...``); their demonstrations are our own, written on this
project's testbeds with observations taken from the sandbox.
"""

from __future__ import annotations

__all__ = [
    "ERROR",
    "LANGUAGE",
    "PLAN_EXECUTE",
    "PLAN_INTRO",
    "REACT_DEMOS",
    "REACT_INTRO",
    "RETHINK",
    "SETTING",
    "SOLVE",
    "SYSTEM",
    "VERIFY",
]

SETTING = "Bourne Shell"
LANGUAGE = "BASH"

# -- StateFlow (paper, appendix A.1) -------------------------------------------------------------

SYSTEM = f"""Interact with a {SETTING} system using {LANGUAGE} queries to answer a question.
Use interleaving Thought, Action, Observation steps. Each time, give a thought and an action, and then observe the result of the action. For action, put your {LANGUAGE} command in the execute[] block. You should only give one command to execute per turn.
## OUTPUT DESCRIPTION
The user will provide the output of the action with this format:
Observation: <string>
## RESPONSE FORMAT
Reply with the following template (<...> is the field description):
Thought: <your thought in one sentence>
Action: execute[<your command>]"""

SOLVE = f"""## Instructions
Given the question, please give a {LANGUAGE} command to solve it.
## Examples
Thought: I can try to use `od` (octal dump) command to get a hexadecimal dump and stitch together the values into one continuous string.
Action: execute[od -A n -t x1 -N 16 /testbed/textfile7.txt | awk '{{$1=$1;print}}' | tr -d ' ']
Thought: I should find the paths to all java files in the testbed directory, then apply the word count command to each path.
Action: execute[find /testbed -name "*.java" -type f -exec md5sum {{}} + | sort | uniq -D -w 32 | awk '{{print $1}}']
Thought: I should find the paths to all php files in the testbed directory, then apply the word count command to each path.
Action: execute[find /testbed -name "*.php" -type f -exec cat {{}} + | wc -l]
Thought: The `du` command is useful for printing out disk usage of a specific directory. I can use the -h option to print in human readable format and the -s option to only print the total disk usage.
Action: execute[du -sh /workspace]
Follow the RESPONSE FORMAT to give your thought and action."""

ERROR = """## Instruction
Please carefully check your last command and output to understand what went wrong. Revise and modify your command accordingly or try another command.
## Examples
Observation: /bin/bash: line 1: xxd: command not found
Thought: Seems like xxd is not available. I can try to use `od` (octal dump) command to get a hexadecimal dump.
Action: execute[od -A n -t x1 -N 16 /testbed/textfile7.txt]
Follow the RESPONSE FORMAT to give your thought and action."""

VERIFY = f"""## Instructions
Please carefully review last command to determine why last observation didn't return any output.
- If last action is a command that won't return any output (e.g., 'touch'), please write an observation command to check last action.
- If it is possible for last action to return output (such as 'find'), please check if there is any mistake in your command, revise and modify your command as needed.
## Examples
Thought: Seems like this did not produce any results. I may have to use another command instead of cut to pick out the hashes from the output string
Action: execute[find /testbed -name "*.java" -type f -exec md5sum {{}} + | sort | uniq -D -w 32 | awk '{{print $1}}']
Thought: I should check that the file was created successfully.
Action: execute[ls testbed/]
## RESPONSE FORMAT
For action, put your {LANGUAGE} command in the execute[] block. Only give one command per turn.
Reply with the following template (<...> is the field description, replace it with your own response):
Thought: <your thought on whether the task is solved and last output answers the question.>
Action: execute[<your command>]"""

# -- Rethink (our extension of the StateFlow machine, not in the paper) ---------------------------

# The question and the failed commands; the Rethink prompt then goes on with SOLVE (its instruction
# and examples): a small model copies the last text it sees, so the prompt ends on real commands.
RETHINK = """Question: {question}
## Failed commands
These commands did not answer the question. Do not run them again:
{tried}
"""

# -- ReAct (upstream InterCode's template shape; our own demonstrations) -------------------------

REACT_INTRO = f"""Interact with a {SETTING} system using {LANGUAGE} queries to answer a question.
Use interleaving Thought, Action, Observation steps.
Thought can reason about the current situation, and Action can be two types:
(1) execute, which executes {LANGUAGE} code on the {SETTING} system
(2) submit, which indicates that the previous observation is the answer
Here are some examples.
"""

REACT_DEMOS = """Question: How many lines do the ".txt" files directly inside /testbed/dir1 have in total?
Thought 1: I can count the lines of each text file with wc -l.
Action 1: execute[wc -l /testbed/dir1/*.txt]
Observation 1: 1 /testbed/dir1/textfile1.txt
Thought 2: There is only one text file, so its line count is the total. I only need the number.
Action 2: execute[cat /testbed/dir1/*.txt | wc -l]
Observation 2: 1
Thought 3: The output is the single number that answers the question.
Action 3: submit
Question: Print the name of every directory under /system/folder1, one per line
Thought 1: The tree command would show the structure.
Action 1: execute[tree -d /system/folder1]
Observation 1: /bin/bash: line 1: tree: command not found
Thought 2: tree is not installed. find can list directories with -type d.
Action 2: execute[find /system/folder1 -type d]
Observation 2: /system/folder1
/system/folder1/sub1
/system/folder1/sub2
Thought 3: The output includes the starting folder itself. -mindepth 1 leaves it out.
Action 3: execute[find /system/folder1 -mindepth 1 -type d]
Observation 3: /system/folder1/sub1
/system/folder1/sub2
Thought 4: These are exactly the directories under /system/folder1. I can submit.
Action 4: submit
Question: Make a copy of /workspace/dir1/terminate.txt named /workspace/terminate.bak
Thought 1: The cp command copies a file to a new name.
Action 1: execute[cp /workspace/dir1/terminate.txt /workspace/terminate.bak]
Observation 1:
Thought 2: cp prints nothing on success. I should check that the copy exists.
Action 2: execute[ls /workspace]
Observation 2: archive.tar.gz
dir1
dir2
terminate.bak
Thought 3: The copy is in /workspace. The task is done.
Action 3: submit
"""

# -- Plan & Solve (upstream InterCode's template shape; our own demonstrations) ------------------

PLAN_INTRO = f"""For the following user question, let's first understand the problem and devise a plan to solve the problem. Then, let's carry out the plan to solve the problem step by step.

Your plan should describe a sequence of {LANGUAGE} commands you can run to determine the answer. Here are three examples of coming up with a plan for a question.

Question: How many lines do the ".txt" files directly inside /testbed/dir1 have in total?
Plan:
1. List the ".txt" files directly inside /testbed/dir1.
2. Concatenate them and count the lines with wc -l, so that a single number is printed.
Question: Print the name of every directory under /system/folder1, one per line
Plan:
1. Check that /system/folder1 exists.
2. Use find with -type d and -mindepth 1 to print every directory below it.
Question: Make a copy of /workspace/dir1/terminate.txt named /workspace/terminate.bak
Plan:
1. Copy the file with cp to the new name.
2. List /workspace to check that the copy exists.

Reply with the plan only, as a numbered list.
"""

PLAN_EXECUTE = f"""You will now execute your own plan. Interact with a {SETTING} system using {LANGUAGE} commands to answer the question. Per turn, you will be given the following information:

Observation: Standard output from executing the previous command
Step: The step of the plan to carry out now

Your response should be one {LANGUAGE} command, nothing else, formatted as follows:
```bash
Your {LANGUAGE} command here
```"""
