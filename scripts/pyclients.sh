#!/usr/bin/env bash
# pyclients.sh: a Python venv holding the real client SDKs kgrag serve is
# tested with: PyPI openai (the OpenAI Python library every chat UI and
# script uses) and mcp (the Model Context Protocol's Python SDK), at
# pinned versions.
#
# Usage: scripts/pyclients.sh           install when needed; print the venv's python
#        scripts/pyclients.sh --check   print the venv's python if it is ready, else exit 1
#
# Environment:
#   KGRAG_PYCLIENTS_VENV   where the venv goes (default .cache/pyclients)
#
# EXIT STATUS: 0 ready (the python path is on stdout); 1 install failed or,
# with --check, not installed.
set -euo pipefail
KG_NAME=pyclients
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

PINS="openai==3.57.0 mcp==2.3.0"
VENV=${KGRAG_PYCLIENTS_VENV:-$KGRAG_REPO/.cache/pyclients}
PY=$VENV/bin/python
STAMP=$VENV/.kgrag-pins

ready() {
	[[ -x $PY && -f $STAMP && $(<"$STAMP") == "$PINS" ]] &&
		"$PY" -c 'import openai, mcp, mcp.client.streamable_http, mcp.client.stdio' >/dev/null 2>&1
}

kg_venv_enter "${1:-}"

kg_log "installing $PINS into $VENV (once)"
rm -rf "$VENV"
python3 -m venv "$VENV" || kg_die "python venv failed in $VENV"
# shellcheck disable=SC2086 # PINS is a list of requirements
"$PY" -m pip install --quiet --disable-pip-version-check $PINS >&2 || kg_die "pip install $PINS failed"
echo "$PINS" >"$STAMP"
ready || kg_die "$PINS installed, but they do not import"
kg_log "$PINS ready"
echo "$PY"
