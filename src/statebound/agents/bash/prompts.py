"""Prompts of the InterCode-Bash agents.

- ``SYSTEM``, ``SOLVE``, ``ERROR``, ``VERIFY``: StateFlow's Bash machine as the authors' code runs it
  (``InterCode/experiments/flow_bash.py``: ``bash_head`` and ``bash_prompts``), verbatim, as their
  model read them: the prompts are plain strings written with ``str.format``'s doubled braces that
  nothing formats, so the examples say ``awk '{{print $1}}'`` and ``-exec md5sum {{}} +``. They
  differ from the paper's Table 2: the system message is two lines, each state prompt ends with its
  own response format, and Verify asks whether the question is answered and to ``submit`` (the
  paper's Verify asks why a command printed nothing and never mentions ``submit``).
- ``PAPER_SYSTEM``, ``PAPER_SOLVE``, ``PAPER_ERROR``, ``PAPER_VERIFY``: the paper's Table 2 (appendix
  A.1), verbatim except for PDF extraction artefacts (line breaks restored, typographic quotes and
  backticks made plain, braces put back: ``awk '{print $1}'``, ``-exec md5sum {} +``; the template
  fields the PDF printed as ``self.setting`` / ``self.language`` filled in as InterCode fills
  them). Our ``stateflow-output-end`` extension runs on them.
- ReAct and Plan & Solve: upstream InterCode's ``TemplateReAct`` / ``TemplatePlanSolve`` with its
  Bash demonstrations (``DEMO_BASH_REACT``, ``DEMO_BASH_PLAN`` in ``experiments/utils/prompts.py``),
  verbatim, slips included (a demonstration action without ``execute[...]``, a plan without its
  ``Plan:`` line).
"""

from __future__ import annotations

from statebound.agents.intercode_templates import plan_execute, plan_intro, react_intro

__all__ = [
    "ERROR",
    "LANGUAGE",
    "PAPER_ERROR",
    "PAPER_SOLVE",
    "PAPER_SYSTEM",
    "PAPER_VERIFY",
    "PLAN_EXECUTE",
    "PLAN_INTRO",
    "PROGRESS_HEADER",
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

# -- StateFlow as the authors' code runs it (InterCode/experiments/flow_bash.py) ----------------

SYSTEM = f"""Interact with a {SETTING} system using {LANGUAGE} queries to answer a question.
Follow the user's instructions to solve the problem."""

# What the authors' PromptAssistant puts between a state's prompt and the conversation so far.
PROGRESS_HEADER = "\n\nHere is the question and current progress:"

_RESPONSE_FORMAT = f"""Please follow this RESPONSE FORMAT to give your thought and action.
## RESPONSE FORMAT
For action, put your {LANGUAGE} command in the execute[] block. Only give one command per turn."""

# Solve's examples, the same in the code and in Table 2 (with single braces, as Table 2 prints them)
_SOLVE_EXAMPLES = """Thought: I can try to use `od` (octal dump) command to get a hexadecimal dump and stitch together the values into one continuous string.
Action: execute[od -A n -t x1 -N 16 /testbed/textfile7.txt | awk '{$1=$1;print}' | tr -d ' ']
Thought: I should find the paths to all java files in the testbed directory, then apply the word count command to each path.
Action: execute[find /testbed -name "*.java" -type f -exec md5sum {} + | sort | uniq -D -w 32 | awk '{print $1}']
Thought: I should find the paths to all php files in the testbed directory, then apply the word count command to each path.
Action: execute[find /testbed -name "*.php" -type f -exec cat {} + | wc -l]
Thought: The `du` command is useful for printing out disk usage of a specific directory. I can use the -h option to print in human readable format and the -s option to only print the total disk usage.
Action: execute[du -sh /workspace]
"""

def _as_sent(text: str) -> str:
    """``text`` with its braces doubled: how the authors' unformatted prompts reached their model."""
    return text.replace("{", "{{").replace("}", "}}")


SOLVE = f"""## Instructions
Given the question, please give a {LANGUAGE} command to solve it.

## Examples 
{_as_sent(_SOLVE_EXAMPLES)}
{_RESPONSE_FORMAT}
Reply with the following template (<...> is the field description, replace it with your own response):

Thought: <your thought on how the question should be solved in one short sentence>
Action: execute[<your command>]
"""

ERROR = f"""## Instruction
Please carefully check your last command and output to understand what went wrong. Revise and modify your command accordingly or try another command.

## Examples
Observation: /bin/bash: line 1: xxd: command not found
Thought: Seems like xxd is not available. I can try to use `od` (octal dump) command to get a hexadecimal dump.
Action: execute[od -A n -t x1 -N 16 /testbed/textfile7.txt]

{_RESPONSE_FORMAT}
Reply with the following template (<...> is the field description, replace it with your own response):

Thought: <your thought on whether last command is wrong and how you would revise it.>
Action: execute[<your command>]
"""

VERIFY = f"""## Instructions
Carefully check if the question is answered.
- Please check if the desired tasks have been performed.
- If the question also asks for output, please check your last command and output, and make sure the output is in the desired format, and doesn't contain any extra fields.
- If the desired tasks have been performed, please submit the query with this "Action: submit" command. 

## Examples
Thought: This gives me storage information for every folder under the workspace directory, but I only need the storage for just the `workspace/` directory. The `-s` option should help with this.
Action: execute[du -sh /workspace]
Thought: This shows the output hashes and they have the same values, indicating that these files are duplicates. However, the file names are also shown, which are not needed.
Action: execute[find /testbed -name "*.java" -type f -exec md5sum {{{{}}}} + | sort | uniq -D -w 32 | awk '{{{{print $1}}}}']
Thought: This shows me too much information, I only need the total number of lines. I should add up the lines together and output a single number.
Action: execute[find /testbed -name "*.php" -type f -exec cat {{{{}}}} + | wc -l]
Thought: The hello.txt file has been created successfully in the testbed/ directory, and it contains the Hello World text. I can submit.
Action: submit

{_RESPONSE_FORMAT}
If the question is solved, your action should be "Action: submit".
Reply with the following template (<...> is the field description, replace it with your own response, "|" is the "or" operation):

Thought: <your thought on whether the question is answered in one sentence>
Action: execute[<your new command>] | submit
"""

# -- StateFlow as the paper prints it (appendix A.1, Table 2): the stateflow-output-end extension --

PAPER_SYSTEM = f"""Interact with a {SETTING} system using {LANGUAGE} queries to answer a question.
Use interleaving Thought, Action, Observation steps. Each time, give a thought and an action, and then observe the result of the action. For action, put your {LANGUAGE} command in the execute[] block. You should only give one command to execute per turn.
## OUTPUT DESCRIPTION
The user will provide the output of the action with this format:
Observation: <string>
## RESPONSE FORMAT
Reply with the following template (<...> is the field description):
Thought: <your thought in one sentence>
Action: execute[<your command>]"""

PAPER_SOLVE = f"""## Instructions
Given the question, please give a {LANGUAGE} command to solve it.
## Examples
{_SOLVE_EXAMPLES}Follow the RESPONSE FORMAT to give your thought and action."""

PAPER_ERROR = """## Instruction
Please carefully check your last command and output to understand what went wrong. Revise and modify your command accordingly or try another command.
## Examples
Observation: /bin/bash: line 1: xxd: command not found
Thought: Seems like xxd is not available. I can try to use `od` (octal dump) command to get a hexadecimal dump.
Action: execute[od -A n -t x1 -N 16 /testbed/textfile7.txt]
Follow the RESPONSE FORMAT to give your thought and action."""

PAPER_VERIFY = f"""## Instructions
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

# -- ReAct (upstream InterCode's TemplateReAct and DEMO_BASH_REACT) ---------------------------------

REACT_INTRO = react_intro(SETTING, LANGUAGE)

REACT_DEMOS = """Question: Convert the first 16 characters in "/testbed/textfile7.txt" to a single hexadecimal value
Thought 1: I can use the `xxd` command to get a hexdump of the /textbed/textfile7.txt file
Action 1: execute[xxd -p -l 16 /testbed/textfile7.txt]
Observation 1: /bin/bash: line 1: xxd: command not found
Thought 2: Seems like xxd is not available. I can try to use `od` (octal dump) command to get a hexadecimal dump.
Action 2: execute[od -A n -t x1 -N 16 /testbed/textfile7.txt]
Observation 2:  54 65 78 74 20 66 69 6c 65 20 37 20 77 69 74 68
Thought 3: This command is showing the hexadecimal representation of the first 16 bytes, but it is not a single value.
I should try stitching together the values into one continuous string.
Action 3: execute[od -A n -t x1 -N 16 /testbed/textfile7.txt | awk '{$1=$1;print}' | tr -d ' ']
Observation 3: 546578742066696c6520372077697468
Thought 4: I've configured
Action 4: submit
Question: Calculate a list of duplicate md5 sum hashes for all the ".java" files in the /testbed directory
Thought 1: Find all files with the `.java` extension in `testbed/`, then calculate the md5hash, sort them,
filter out duplicates, and only pick the first line of the hash.
Action 1: execute[find /testbed -name "*.java" -type f -exec md5sum {} + | sort | uniq -d | cut -d' ' -f1]
Observation 1: 
Thought 2: Seems like this did not produce any results. I may have to use another command instead of cut
to pick out the hashes from the output string
Action 2: execute[find /testbed -name "*.java" -type f -exec md5sum {} + | sort | uniq -Dw 32]
Observation 2: f32a3a97638afeb2ee2a15cfe335ab72  /testbed/Hello.java
f32a3a97638afeb2ee2a15cfe335ab72  /testbed/Hello1.java
f32a3a97638afeb2ee2a15cfe335ab72  /testbed/dir1/AnotherHello.java
Thought 3: This shows the output hashes and they have the same values, indicating that these files are duplicates.
However, the file names are also shown, which are not needed.
Action 3: execute[find /testbed -name "*.java" -type f -exec md5sum {} + | sort | uniq -D -w 32 | cut -c 35-]
Observation 3: /testbed/Hello.java
/testbed/Hello1.java
/testbed/dir1/AnotherHello.java
Thought 4: This shows the file names exclusively, and no longer shows the hashes. It seems that the cut
command argument may not be the best choice for selecting file names.
Action 4: execute[find /testbed -name "*.java" -type f -exec md5sum {} + | sort | uniq -D -w 32 | awk '{print $2}']
Observation 4: /testbed/Hello.java
/testbed/Hello1.java
/testbed/dir1/AnotherHello.java
Thought 5: I use the awk command instead, but instead of printing out the hashes, it still prints out the file
names. I should select a different part of the output string instead of `$2`
Action 5: execute[find /testbed -name "*.java" -type f -exec md5sum {} + | sort | uniq -D -w 32 | awk '{print $1}']
Observation 5: f32a3a97638afeb2ee2a15cfe335ab72
f32a3a97638afeb2ee2a15cfe335ab72
f32a3a97638afeb2ee2a15cfe335ab72
Thought 6: This prints out identical hashes, and based on previous observations, I know that these are hashes of
duplicates `.java` files from the `testbed/` directory. This should be correct. I will submit.
Action 6: submit
Question: print disk usage in human readable format of files or folders in /workspace
Thought 1: The `du` command is useful for printing out disk usage of a specific directory. I can use this to
display this information for the `workspace` directory
Action 1: execute[du /workspace]
Observation 1: 48\t/workspace/dir1
8\t/workspace/dir2/mysql
24\t/workspace/dir2
100\t/workspace
Thought 2: The default `du` command gives storage in a non-human readble font. I can use the -h option
of the du command to print storage size with bytes.
Action 2: execute[du -h /workspace]
Observation 2: 48K\t/workspace/dir1
8.0K\t/workspace/dir2/mysql
24K\t/workspace/dir2
100K\t/workspace
Thought 3: This gives me storage information for every folder under the workspace directory, but
I only need the storage for just the `workspace/` directory. The `-s` option should help with this.
Action 3: execute[du -sh /workspace]
Observation 3: 100K\t/workspace
Thought 4: This shows data usage in human readable format for the `workspace` directory. I am finished.
Action 4: submit
Question: Count all the lines of all php files in the /testbed directory recursively
Thought 1: I should find the paths to all php files in the testbed directory, then apply the word
count command to each path.
Action 1: execute[find /testbed -name "*.php" | xargs wc -l]
Observation 1:  1 /testbed/dir1/info.php
 1 /testbed/hello.php
 2 total
Thought 2: This shows me too much information, I only need the total number of lines. I should add up
the lines together and output a single number.
Action 2: execute[find /testbed -name "*.php" -exec wc -l {} + | awk '{total += $1} END{print total}']
Observation 2: 4
Thought 3: This total is wrong, it doesn't match the previous observation, where total is 2. I only
need to apply the word count command.
Action 3: execute[find /testbed -name "*.php" -type f -exec cat {} + | wc -l]
Observation 3: 2
Thought 4: The value is 2, which matches the initial observation that the total lines of php files in the
testbed directory is 2. I can submit.
Action 4: submit
Question: Create a hello.txt file in the /testbed directory and add the text "Hello world" to it.
Thought 1: I can first create a `hello.txt` file in the `testbed/` directory
Action 1: touch testbed/hello.txt
Observation 1:
Thought 2: I should check that the file was created successfully.
Action 2: execute[ls testbed/]
Observation 2: dir1/
dir2/
dir3/
hello.txt
files.txt
Thought 3: I can now add the "Hello world" text to the hello.txt file
Action 3: execute[echo Hello world > hello.txt]
Observation 3:
Thought 4: I should check that the text was written successfully to the hello.txt file.
Action 4: execute[cat testbed/hello.txt]
Observation 4: Hello world
Thought 5: The hello.txt file has been created successfully in the testbed/ directory, and it contains
the Hello World text. I can submit.
Action 5: submit
"""

# -- Plan & Solve (upstream InterCode's TemplatePlanSolve and DEMO_BASH_PLAN) -----------------------

_PLAN_DEMOS = """Question: Create a hello.txt file in the /testbed directory and add the text "Hello world" to it.
Plan:
1. Check that the `testbed` directory exists.
2. If it does not exist, create the directory
3. Create the hello.txt file in the `testbed` directory
4. Write the text "Hello world" to inside the `hello.txt` file
Question: Calculate a list of duplicate md5 sum hashes for all the ".java" files in the /testbed directory
1. Check that the `testbed` directory exists
2. Look for all files with the `.java` extension in `testbed`
3. Genereate an md5 sum hash for all java files
4. Edit the command to only keep the md5 sum hash files that are duplicates
Question: Print disk usage in human readable format of files or folders in /workspace
Thought 1: The `du` command is useful for printing out disk usage of a specific directory. I can use this to
display this information for the `workspace` directory
1. Check that the `du` command is installed and available on this system.
2. Check the man docs for du to see what option is useful for generating human readable formats
3. Use the `du` command with the `workspace/` dircetory as the argument to get disk usage.
"""

PLAN_INTRO = plan_intro(LANGUAGE, _PLAN_DEMOS)
PLAN_EXECUTE = plan_execute(SETTING, LANGUAGE)
