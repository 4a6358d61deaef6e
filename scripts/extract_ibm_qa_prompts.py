"""Extract IBM/llm-agent-framework's QA prompt texts, as its loader (src/prompt.py) cleans them, to
src/statebound/data/prompts/ibm_qa_prompts.json (run from the repository root with the mirror at /work/.mirror).

    python scripts/extract_ibm_qa_prompts.py src/statebound/data/prompts/ibm_qa_prompts.json
"""
import ast, json, subprocess, sys
GIT = ["git", "--git-dir=/work/.mirror/IBM+llm-agent-framework/repo"]
commit = subprocess.check_output(GIT + ["rev-parse", "HEAD"], text=True).strip()
def show(path): return subprocess.check_output(GIT + ["show", f"HEAD:{path}"], text=True)
def clean(text):  # src/prompt.py _clean_text_content
    tab = "[TAB_SEP]"
    text = text.strip().replace("\t", tab)
    return "\n".join(line.strip().replace(tab, "\t") for line in text.split("\n")).strip()
def agents(path, keep):
    data = ast.literal_eval(show(path))
    out = {}
    for name in keep:
        c = data[name]
        out[name] = {"instructions": clean(c["instructions"]), "examples": [clean(e) for e in c["examples"]], "input": clean(c["input"])}
    return out
tree = ast.parse(show("src/states/toolset.py"))
cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "ToolSetSummarizeHandler")
attrs = {t.targets[0].id: ast.literal_eval(t.value) for t in cls.body if isinstance(t, ast.Assign) and isinstance(t.targets[0], ast.Name) and t.targets[0].id.startswith("_")}
def tool_desc(path):
    t = ast.parse(show(path)); res = {}
    for c in (n for n in t.body if isinstance(n, ast.ClassDef)):
        vals = {a.target.id: ast.literal_eval(a.value) for a in c.body if isinstance(a, ast.AnnAssign) and a.value is not None and isinstance(a.target, ast.Name)}
        if "name" in vals and "description" in vals: res[vals["name"]] = vals["description"]
    return res
tools = {**tool_desc("src/tools/wiki.py"), **tool_desc("src/tools/calculator.py"), **tool_desc("src/tools/llm.py")}
llm_cls = next(c for c in ast.parse(show("src/tools/llm.py")).body if isinstance(c, ast.ClassDef) and c.name == "LlmGenerationTool")
llm_expr = next(a.value for a in llm_cls.body if isinstance(a, ast.Assign) and a.targets[0].id == "_PROMPT")
llm_prompt = eval(compile(ast.Expression(llm_expr), "llm.py", "eval"), {"__builtins__": {}}, {"INP_VAR": "action_input"})
solver = {t.targets[0].id: ast.literal_eval(t.value) for t in ast.parse(show("src/states/solver.py")).body
          if isinstance(t, ast.Assign) and isinstance(t.targets[0], ast.Name) and t.targets[0].id.startswith("_")}
styles = ["direct", "cot", "react", "reflexion", "rewoo", "pass", "pass_list"]
doc = {
    "source": f"github.com/IBM/llm-agent-framework@{commit}",
    "files": {"summary": "src/states/toolset.py (ToolSetSummarizeHandler)", "hotpotqa": "data/prompts/hotpot_qa.py",
              "gsm8k": "data/prompts/gsm8k_main.py", "solver": "src/states/solver.py", "tools": "src/tools/wiki.py, src/tools/calculator.py, src/tools/llm.py"},
    "note": "texts as src/prompt.py's loader cleans them (each line stripped); agent granite_react left out",
    "summary": {"prefix": attrs["_PREFIX"], "format": attrs["_FORMAT"], "examples": attrs["_GEN_EXAMPLES"], "suffix": attrs["_SUFFIX"]},
    "llm_tool_prompt": llm_prompt,
    "solver": {"prefix": solver["_PREFIX"], "format": solver["_FORMAT"], "suffix": solver["_SUFFIX"]},
    "tools": {k: tools[k] for k in ("Search", "Lookup", "Calculator", "LLM")},
    "hotpotqa": agents("data/prompts/hotpot_qa.py", styles),
    "gsm8k": agents("data/prompts/gsm8k_main.py", [s for s in styles if s != "reflexion"]),
}
json.dump(doc, open(sys.argv[1], "w"), indent=1, ensure_ascii=False); print(commit)
