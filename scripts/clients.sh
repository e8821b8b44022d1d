#!/usr/bin/env bash
# clients.sh: the programs people already use to talk to an OpenAI API or
# an MCP server, installed from their registries at pinned versions, for
# the tests that drive kgrag serve with them: LangChain's ChatOpenAI
# (PyPI langchain-openai), LlamaIndex's OpenAILike (PyPI
# llama-index-llms-openai-like), Simon Willison's llm command (PyPI llm)
# and the MCP Inspector's command line (npm @modelcontextprotocol/inspector).
#
# Usage: scripts/clients.sh           install when needed; print the folder
#        scripts/clients.sh --check   print the folder if ready, else exit 1
#
# The folder (KGRAG_CLIENTS_DIR, default .cache/clients) holds a venv for
# each Python client, as their users install them (their pins of openai
# conflict): langchain/, llamaindex/ and llm/ (llm/bin/llm), and
# node_modules/.bin/mcp-inspector.
set -euo pipefail
KG_NAME=clients
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

VENVS=(langchain:langchain-openai==1.7.4 llamaindex:llama-index-llms-openai-like==0.8.1 llm:llm==0.36)
NPM_PINS="@modelcontextprotocol/inspector@2.12.0"
DIR=${KGRAG_CLIENTS_DIR:-$KGRAG_REPO/.cache/clients}
STAMP=$DIR/.kgrag-pins
PINS="${VENVS[*]} $NPM_PINS"

ready() {
	[[ -f $STAMP && $(<"$STAMP") == "$PINS" && -x $DIR/llm/bin/llm && -x $DIR/node_modules/.bin/mcp-inspector ]] &&
		"$DIR/langchain/bin/python" -c 'import langchain_openai' >/dev/null 2>&1 &&
		"$DIR/llamaindex/bin/python" -c 'import llama_index.llms.openai_like' >/dev/null 2>&1
}
if ready; then
	echo "$DIR"
	exit 0
fi
[[ ${1:-} == --check ]] && exit 1
command -v npm >/dev/null || kg_die "npm is needed for the MCP Inspector"
t0=$(date +%s%N)
kg_log "installing $PINS into $DIR (once; a few minutes)"
rm -rf "$DIR"
mkdir -p "$DIR"
for v in "${VENVS[@]}"; do
	name=${v%%:*} pin=${v#*:}
	python3 -m venv "$DIR/$name" || kg_die "python venv failed in $DIR/$name"
	# --no-compile: Python compiles what it imports when first used.
	"$DIR/$name/bin/python" -m pip install --quiet --disable-pip-version-check --no-compile "$pin" >&2 || kg_die "pip install $pin failed"
done
npm install --prefix "$DIR" --no-audit --no-fund --loglevel=error "$NPM_PINS" >&2 || kg_die "npm install $NPM_PINS failed"
echo "$PINS" >"$STAMP"
ready || kg_die "installed, but they do not run"
kg_log "ready in $(kg_ms_since "$t0") ms"
echo "$DIR"
