"""Prompts of the InterCode-SQL agents.

StateFlow's prompts are the paper's appendix A.1 (Table 5), verbatim except for PDF artefacts
(curly quotes, backticks printed as quotes, lost line breaks). The ReAct demonstrations are
upstream InterCode's (``experiments/utils/prompts.py``: the first four SQL trajectories, the ones
the StateFlow paper describes). ReAct_Refined's first two examples are the paper's Table 7; the
last two are ours, rewritten in the same way (start with SHOW TABLES, then DESC, then SELECT).
Plan & Solve follows upstream InterCode's ``TemplatePlanSolve`` and its three SQL plans.
"""

from __future__ import annotations

from statebound.agents.intercode_templates import plan_execute, plan_intro, react_intro

__all__ = [
    "ERROR",
    "INIT_THOUGHT",
    "LANGUAGE",
    "OBSERVE",
    "PLAN_EXECUTE",
    "PLAN_INTRO",
    "REACT_DEMOS",
    "REACT_INTRO",
    "REACT_REFINED_DEMOS",
    "SETTING",
    "SOLVE",
    "SOLVE_SUBMIT_SENTENCE",
    "SYSTEM",
    "VERIFY",
]

SETTING = "MySQL Database"
LANGUAGE = "SQL"

SYSTEM = f"""Interact with a {SETTING} system using {LANGUAGE} queries to answer a question.
## RESPONSE FORMAT
For action, put your SQL command in the execute[] block. You should only give one command to execute per turn.
Reply with the following template (<...> is the field description, replace it with your own response):
Thought: <your thought>
Action: execute[<your command>]"""

OBSERVE = """## Instructions
Use the DESCRIBE [table_name] or DESC [table_name] command to understand the structure of the relevant tables. Only give one DESC command in action.
## Examples
Action: execute[DESC highschooler]
Action: execute[DESC friends]
Follow the RESPONSE FORMAT to give your thought and action."""

SOLVE = """## Instructions
Based on the understanding of the tables and the problem, formulate a SQL query with SELECT that answers the question EXACTLY. Use specific clauses like WHERE, JOIN, GROUP BY, HAVING, etc if necessary.
If you need more information of another table, use DESC to explore the table.
Notes: You should construct your command that the output answers the question exactly. For example, If the question asks for count, your command should output a single number. Only select the field the question asks for. Do not include relevant but unnecessary fields such as ids or counts, unless the question specifically asks for it. No need to CAST or ROUND numbers unless the question asks for it.
## Examples:
Thought: I should write a SQL command that selects the names from a table about high schoolers in ascending order of their grades. Grade should not be selected.
Action: execute[SELECT name, grade FROM high_schoolers ORDER BY high_schoolers.grades ASC]
Thought: I can use the SUM and AVG functions to get the total population and average area values for North America.
Action: execute[execute[SELECT SUM(population) AS total_population, AVG(area) AS avg_area FROM countries WHERE continent = 'North America' AND area > 3000]]
Thought: I should write a SQL query that gets the name field from contestants and exclude the name of 'Jessie Alloway'
Action: execute[SELECT contestant_name FROM contestants WHERE contestant_name != 'Jessie Alloway']
Follow the RESPONSE FORMAT to give your thought and action."""

# Ablation No_Verify (section 4.4): "add a sentence in Solve to prompt the model to submit when
# finished". The paper does not print the sentence; this one is ours.
SOLVE_SUBMIT_SENTENCE = (
    'If the output of your last command answers the question exactly, submit it with "Action: submit".'
)

ERROR = """## Instructions
Please carefully read the error message to understand what went wrong. If you don't have enough information to solve the question, you can use the DESC [table_name] command to explore another table. You may want to review other tables to see if they have the information you need.
## Examples
Thought: A `transcripts` table exists, but it doesn't have the `release_date` column I came up with. I should find out what columns are available.
Thought: The `friends` table has two ids. I should check if the `highschooler` table has a name associated with an ID.
Thought: The `contestants` is a table, it is not a column in `people`. I need to check the `contestants` table to see how to get the contestant names.
Thought: I get a single number that is the number of likes that the high schooler Kyle has. This should be the answer.
Follow the RESPONSE FORMAT to give your thought and action."""

VERIFY = """## Instructions
Carefully check if the output answers the question exactly. Make sure the output only display fields that the problem asks for.
- If the output contains any extra fields, please revise and modify your query (column alias is fine, no need to round numbers).
- If the output doesn't answer the question, please revise and modify your query. You may use DESC/DESCRIBE to learn more about the tables.
- If the output answers the question exactly, please submit the query with this "Action: submit" command.
## Examples
Thought: The output displays the contestant names and also contestant count. Although the count is used for sorting, it should not be displayed in output. I should modify my query to only select the contestant names.
Thought: The question asks for the total population for North America. However, the output also has the continent id. I should modify my query to only select the total population.
## RESPONSE FORMAT
For action, put your SQL command in the execute[] block. If the problem is solved, your action should be "Action: submit".
Reply with the following template (<...> is the field description, replace it with your own response, "|" is the "or" operation):
Thought: <your thought on whether the output and command answers the problem>
Action: execute[<your new command>] | submit"""

# -- ReAct (upstream InterCode's TemplateReAct and DEMO_SQL_REACT) ----------------------------
REACT_INTRO = react_intro(SETTING, LANGUAGE)

_HIGHSCHOOLER_DESC = """[('ID', 'int', 'NO', 'PRI', None, 'auto_increment'), ('name', 'text', 'YES', '', None, ''), 
('grade', 'int', 'YES', '', None, '')]"""
_HIGHSCHOOLER_ROWS = """[('John', 12), ('Haley', 10), ('Alexis', 11), ('Jordan', 12), ('Austin', 11), ('Tiffany', 9), 
('Kris', 10), ('Jessica', 11), ('Jordan', 9), ('Brittany', 10), ('Logan', 12), ('Gabriel', 9), ('Cassandra', 9), 
('Andrew', 10), ('Gabriel', 11), ('Kyle', 12)]"""
_CONTESTANTS_DESC = """[('contestant_number', 'int', 'NO', 'PRI', None, 'auto_increment'), ('contestant_name', 
'varchar(50)', 'NO', '', None, '')]"""
_CONTESTANTS_ROWS = """[('Edwina Burnam',), ('Tabatha Gehling',), ('Kelly Clauss',), ('Alana Bregman',), ('Jessie 
Eichman',), ('Allie Rogalski',), ('Nita Coster',), ('Kurt Walser',), ('Ericka Dieter',), ('Loraine NygrenTania 
Mattioli',)]"""
_CONTESTANTS_TAIL = f"""Action 3: execute[SELECT contestant_name FROM contestants WHERE contestant_name != 'Jessie Alloway']
Observation 3: {_CONTESTANTS_ROWS}
Thought 4: The SQL query worked, and the output shows all the contestant's names, but does not include
'Jessie Alloway'. I am finished with this query.
Action 4: submit"""
_TRANSCRIPTS_DESC = """[('transcript_id', 'int', 'NO', 'PRI', None, 'auto_increment'), ('transcript_date', 'datetime', 
'YES', '', None, ''), ('other_details', 'varchar(255)', 'YES', '', None, '')]"""

REACT_DEMOS = f"""Question: What are the names and grades for each high schooler?
Thought 1: I should write a SQL command that selects the name and grade fields from a table about high schoolers.
Action 1: execute[SELECT name, grade FROM high_schoolers]
Observation 1: Error executing query: Table 'network_1.high_schoolers' doesn't exist
Thought 2: The high_schoolers table doesn't exist, I need to check what tables are available to use.
Action 2: execute[SHOW TABLES]
Observation 2: [('friend',), ('highschooler',), ('likes',)]
Thought 3: There is a table called `highschoolers`. I should check what information this table contains.
Action 3: execute[DESC highschooler]
Observation 3: {_HIGHSCHOOLER_DESC}
Thought 4: The highschooler table contains the name and grade columns. I can now write a SQL command that answers
the question
Action 4: execute[SELECT name, grade FROM highschooler]
Observation 4: {_HIGHSCHOOLER_ROWS}
Thought 5: The output contains the name and grade for each high schooler, answering the question. I can submit
this as the answer.
Action 5: submit
Question: What are the names of the contestants whose names are not 'Jessie Alloway'
Thought 1: I should write a SQL query that gets the name field from contestants and exclude the name
of 'Jessie Alloway'
Action 1: execute[SELECT name FROM contestants WHERE name != 'Jessie Alloway']
Observation 1: Error executing query: Unknown column 'name' in 'field list'
Thought 2: It looks like there is a table called `contestants`, but it doesn't have a name column. I need to
find out what columns are available.
Action 2: execute[DESCRIBE contestants]
Observation 2: {_CONTESTANTS_DESC}
Thought 3: The available columns for the `contestant` table are `contestant_number` and `contestant_name`.
I can now write a SQL query.
{_CONTESTANTS_TAIL}
Question: What is the last transcript release date?
Thought 1: I should write a SQL query that 
Action 1: execute[SELECT MAX(release_date) AS last_transcript_release_date FROM transcripts]
Observation 1: Error executing query: Unknown column 'release_date' in 'field list'
Thought 2: A `transcripts` table exists, but it doesn't have the `release_date` column I came up with. I should find
out what columns are available.
Action 2: execute[DESC transcripts]
Observation 2: {_TRANSCRIPTS_DESC}
Thought 3: Looks like there is a `transcript_date` column. I can try replacing `release_date` in my original SQL
query with this field.
Action 3: execute[SELECT MAX(transcript_date) AS last_transcript_release_date FROM transcripts]
Observation 3: [(datetime.datetime(2013, 6, 30, 13, 1, 40),)]
Thought 4: I get the largest `transcript_date`, which should be the latest transcript release. I am done.
Action 4: submit
Question: What is the total population and average area of countries in the continent of North America whose area is 
bigger than 3000 ?
Thought 1: I can use the SUM and AVG functions to get the total population and average area values for North America
where area is larger than 3000.
Action 1: execute[SELECT SUM(population) AS total_population, AVG(area) AS avg_area FROM countries WHERE continent 
= 'North America' AND area > 3000]
Observation 1: Error executing query: Table 'world_1.countries' doesn't exist
Thought 2: The `countries` table I used in the SQL query does not exist. I should check what tables exist.
Action 2: execute[It seems like the table 'countries' does not exist in the database. Can you please confirm if you
have access to a table with this name? If not, can you provide me with the name of the table that contains the 
required data?]
Observation 2: Error executing query: Your last `execute` action did not contain SQL code
Thought 3: I should not be asking questions as an action. Since I am interacting with a MySQL database, I should use
a SQL query to answer my question.
Action 3: execute[SHOW TABLES]
Observation 3: [('city',), ('country',), ('countrylanguage',)]
Thought 4: There are three tables. I can try writing a query using the `country` table since the question is asking
about countries.
Action 4: execute[SELECT SUM(population), AVG(surfacearea) FROM country WHERE continent = 'North America' AND 
surfacearea > 3000]
Observation 4: [(Decimal('480753000'), 1344763.722222)]
Thought 5: The query executed successfully, and I get two numbers, one for total population and another for average area.
I use the `WHERE` command to filter for continents in North America with a surface area greater than 3000. This answer
should be correct.
Action 5: submit
"""

_SHOW_TABLES_THOUGHT = ("I should first find out what tables are available in this MySQL database that can help "
                        "me answer this question")

# StateFlow's Init step as the authors' runner shows it (InterCode/experiments/eval_stateflow_sql.py):
# the question, then this thought, the SHOW TABLES action and its observation.
INIT_THOUGHT = f"Thought: {_SHOW_TABLES_THOUGHT}."

# Examples 1-2: the paper's Table 7 (its "...(same as original)" parts filled in from the original);
# examples 3-4: ours, in the same style.
REACT_REFINED_DEMOS = f"""Question: What are the names and grades for each high schooler?
Thought 1: {_SHOW_TABLES_THOUGHT}.
Action 1: execute[SHOW TABLES]
Observation 1: [('friend',), ('highschooler',), ('likes',)]
Thought 2: There is a table called `highschoolers`. I should check what information this table contains.
Action 2: execute[DESC highschooler]
Observation 2: {_HIGHSCHOOLER_DESC}
Thought 3: The highschooler table contains the name and grade. I can now write a SQL command that answers the question.
Action 3: execute[SELECT name, grade FROM highschooler]
Observation 3: {_HIGHSCHOOLER_ROWS}
Thought 4: The output contains the name and grade for each high schooler, answering the question. I can submit
this as the answer.
Action 4: submit
Question: What are the names of the contestants whose names are not 'Jessie Alloway'?
Thought 1: {_SHOW_TABLES_THOUGHT}
Action 1: execute[SHOW TABLES]
Observation 1: [('contestants')]
Thought 2: It looks like there is a table called `contestants`, but it doesn't have a name column. I need to find out what columns are available.
Action 2: execute[DESCRIBE contestants]
Observation 2: {_CONTESTANTS_DESC}
Thought 3: The available columns for the `contestant` table are `contestant_number` and `contestant_name`. I can now write a SQL query.
{_CONTESTANTS_TAIL}
Question: What is the last transcript release date?
Thought 1: {_SHOW_TABLES_THOUGHT}
Action 1: execute[SHOW TABLES]
Observation 1: [('addresses',), ('courses',), ('degree_programs',), ('departments',), ('sections',), ('semesters',), ('student_enrolment',), ('student_enrolment_courses',), ('students',), ('transcript_contents',), ('transcripts',)]
Thought 2: There is a table called `transcripts`. I should check what information this table contains.
Action 2: execute[DESC transcripts]
Observation 2: {_TRANSCRIPTS_DESC}
Thought 3: There is a `transcript_date` column. I can now write a SQL query that picks the latest transcript date.
Action 3: execute[SELECT MAX(transcript_date) AS last_transcript_release_date FROM transcripts]
Observation 3: [(datetime.datetime(2013, 6, 30, 13, 1, 40),)]
Thought 4: I get the largest `transcript_date`, which should be the latest transcript release. I am done.
Action 4: submit
Question: What is the total population and average area of countries in the continent of North America whose area is 
bigger than 3000 ?
Thought 1: {_SHOW_TABLES_THOUGHT}
Action 1: execute[SHOW TABLES]
Observation 1: [('city',), ('country',), ('countrylanguage',)]
Thought 2: The `country` table is likely to hold population and area. I should check what information this table contains.
Action 2: execute[DESC country]
Observation 2: [('Code', 'char(3)', 'NO', 'PRI', '', ''), ('Name', 'char(52)', 'NO', '', '', ''), ('Continent', 'text', 'NO', '', None, ''), ('Region', 'char(26)', 'NO', '', '', ''), ('SurfaceArea', 'float(10,2)', 'NO', '', '0.00', ''), ...]
Thought 3: The country table has `Continent`, `Population` and `SurfaceArea` columns. I can now write a SQL query.
Action 3: execute[SELECT SUM(population), AVG(surfacearea) FROM country WHERE continent = 'North America' AND surfacearea > 3000]
Observation 3: [(Decimal('480753000'), 1344763.722222)]
Thought 4: The query executed successfully, and I get two numbers, one for total population and another for average area. This answer should be correct.
Action 4: submit
"""

# -- Plan & Solve (upstream InterCode's TemplatePlanSolve and DEMO_SQL_PLAN) -----------------------
_PLAN_DEMOS = """Question: What are the names and grades for each high schooler?
Plan:
1. Check what tables are available for use.
2. Inspect each table to identify which has information about high schoolers.
3. Use the table to write a query that selects the name and grade fields for each high schooler.
Question: What are the names of the contestants whose names are not 'Jessie Alloway'
Plan: 
1. Check what tables are available to use.
2. Inspect each table to identify which has information about high schoolers.
3. Use the table to write a query that selects the name of each contestants except for Jessie Alloway.
Question: What is the last transcript release date?
Plan:
1. Check what tables are available for use.
2. Inspect which tables may have information about transcripts.
3. From the correct table, write a query that picks the latest transcript release date value.
"""

PLAN_INTRO = plan_intro(LANGUAGE, _PLAN_DEMOS)
PLAN_EXECUTE = plan_execute(SETTING, LANGUAGE)
