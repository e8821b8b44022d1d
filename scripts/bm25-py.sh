#!/usr/bin/env bash
# bm25-py.sh: a Python venv holding rank_bm25 (Okapi BM25 as a plain
# Python library computes it), the lexical peer kgrag's retrieval is set
# beside on multi-hop question sets (scripts/oracle/bm25_recall.py, the
# bench's multihop step).
#
# Usage: scripts/bm25-py.sh           install when needed; print the venv's python
#        scripts/bm25-py.sh --check   print the venv's python if it is ready, else exit 1
#
# The venv is $KGRAG_BM25_VENV (default .cache/bm25-py in the repository).
# A stamp file records the pinned version; when it matches and the module
# imports, nothing is fetched.
#
# EXIT STATUS: 0 ready (the python path is on stdout); 1 install failed or,
# with --check, not installed.
set -euo pipefail
KG_NAME=bm25-py
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

PINS=(rank_bm25==0.2.2 numpy==2.2.6)
VENV=${KGRAG_BM25_VENV:-$KGRAG_REPO/.cache/bm25-py}
PY=$VENV/bin/python
STAMP=$VENV/.kgrag-bm25-pins

ready() {
	[[ -x $PY && -f $STAMP && $(<"$STAMP") == "${PINS[*]}" ]] &&
		"$PY" -c 'import rank_bm25' >/dev/null 2>&1
}

kg_venv_enter "${1:-}"

kg_venv_install "${KGRAG_BM25_PYTHON:-python3}"
