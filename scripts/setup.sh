#!/usr/bin/env bash
# One-time set-up, safe to re-run: system packages, a virtual environment in .venv, and the
# project with every extra. `make demo` and `make test` call this, so nobody has to.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=.venv
STAMP="$VENV/.installed-$(cat pyproject.toml scripts/setup.sh scripts/setup_mcp.sh | sha1sum | cut -c1-12)"
[ -f "$STAMP" ] && exit 0

# System packages: bubblewrap (the Bash sandbox), MariaDB (the MySQL-compatible SQL backend),
# Graphviz (SVG diagrams of flows and specs), PostgreSQL (the tests of the PostgreSQL
# checkpointer start a private server) and Chromium (the test that looks at report.html in a
# browser; it is skipped, saying why, where Chromium is missing).
need=()
command -v bwrap >/dev/null || need+=(bubblewrap)
command -v mariadbd >/dev/null || [ -x /usr/sbin/mariadbd ] || need+=(mariadb-server)
command -v dot >/dev/null || need+=(graphviz)
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || need+=(postgresql)
command -v chromium >/dev/null || need+=(chromium)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then
    echo "setup: installing ${need[*]} with apt-get"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  else
    echo "setup: please install ${need[*]} (sudo apt-get install ${need[*]}); continuing without them" >&2
  fi
fi

[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip
# llama.cpp is built from source; a native build crashes on CPUs that report instructions the VM
# does not grant, so the instruction set is named explicitly.
export CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON}"
echo "setup: installing statebound and its dependencies into $VENV (the first time builds llama.cpp, 6-8 minutes)"
"$VENV/bin/python" -m pip install -q -e ".[dev]"
# The real MCP servers, the inspector CLI and the conformance suite the MCP tests use, in .mcp/
bash scripts/setup_mcp.sh
rm -f "$VENV"/.installed-*
touch "$STAMP"
echo "setup: done"
