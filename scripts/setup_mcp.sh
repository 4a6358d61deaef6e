#!/usr/bin/env bash
# The real MCP servers, clients and conformance suite the MCP tests use (docs/mcp.md), installed
# into the project's own folder .mcp/ (never globally): npm packages in .mcp/node (with Node 22,
# which the conformance suite needs), PyPI servers in their own virtual environment .mcp/python
# (they pin an older `mcp` than statebound's). Safe to re-run; a no-op once done. A machine
# without npm gets no node packages: the tests that need them are skipped, saying why.
set -euo pipefail
cd "$(dirname "$0")/.."

DIR=.mcp
STAMP="$DIR/.installed-$(sha1sum scripts/setup_mcp.sh | cut -c1-12)"
[ -f "$STAMP" ] && exit 0
mkdir -p "$DIR/node"
complete=1  # everything installed: the stamp makes the next run a no-op

if command -v npm >/dev/null; then
  echo "setup: installing MCP servers, the inspector CLI and the conformance suite into $DIR/node"
  cat > "$DIR/node/package.json" <<'JSON'
{
  "name": "statebound-mcp-tools",
  "private": true,
  "description": "MCP servers and test tools for statebound's tests (scripts/setup_mcp.sh)",
  "dependencies": {
    "@modelcontextprotocol/conformance": "0.1.16",
    "@modelcontextprotocol/inspector-cli": "1.0.3",
    "@modelcontextprotocol/server-everything": "2026.8.31",
    "@modelcontextprotocol/server-filesystem": "2026.8.31",
    "conformance-next": "npm:@modelcontextprotocol/conformance@0.2.0-alpha.12",
    "node": "22.23.3"
  }
}
JSON
  (cd "$DIR/node" && npm install --no-audit --no-fund --loglevel=error >/dev/null) ||
    { complete=0; echo "setup: npm could not install them, so the MCP tests that need them will be skipped" >&2; }
else
  complete=0
  echo "setup: npm is missing, so the MCP tests that need node packages will be skipped" >&2
fi

echo "setup: installing mcp-server-time and mcp-server-git into $DIR/python"
[ -x "$DIR/python/bin/python" ] || python3 -m venv "$DIR/python"
"$DIR/python/bin/python" -m pip install -q "mcp-server-time==2026.10.19" "mcp-server-git==2026.10.19" ||
  { complete=0; echo "setup: pip could not install them, so the MCP tests that need them will be skipped" >&2; }

if [ "$complete" = 1 ]; then
  rm -f "$DIR"/.installed-*
  touch "$STAMP"
fi
