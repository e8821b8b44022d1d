#!/usr/bin/env bash
# graphrag-py.sh: a Python venv holding Microsoft GraphRAG from PyPI, the
# peer that kgrag's local search context is checked against and timed with
# (scripts/oracle/graphrag_local.py).
#
# Usage: scripts/graphrag-py.sh           install when needed; print the venv's python
#        scripts/graphrag-py.sh --check   print the venv's python if it is ready, else exit 1
#
# The venv is $KGRAG_GRAPHRAG_VENV (default .cache/graphrag-py in the
# repository). A stamp file records the installed version; when it matches
# and graphrag's query modules import, nothing is fetched, so a second run
# works offline. tiktoken would download its BPE files on first use, which
# cannot work here: the cl100k_base and o200k_base files are copied into
# $VENV/tiktoken-cache from the Go module tiktoken-go-loader (the files
# kgrag embeds; tiktoken checks their sha256 on every load), and the oracle
# points TIKTOKEN_CACHE_DIR there. Callers running at once (tests, bench)
# are serialised by a lock beside the venv.
#
# Environment:
#   KGRAG_GRAPHRAG_VERSION  PyPI graphrag version (default 3.3.0; 3.x needs
#                           Python >= 3.11, < 3.14)
#   KGRAG_GRAPHRAG_PYTHON   interpreter that makes the venv (default: the
#                           first of python3.11, python3.12, python3.13,
#                           python3 that is in range)
#   KGRAG_GRAPHRAG_VENV     where the venv goes
#
# EXIT STATUS: 0 ready (the python path is on stdout); 1 install failed or,
# with --check, not installed.
set -euo pipefail
KG_NAME=graphrag-py
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

VERSION=${KGRAG_GRAPHRAG_VERSION:-3.3.0}
VENV=${KGRAG_GRAPHRAG_VENV:-$KGRAG_REPO/.cache/graphrag-py}
PY=$VENV/bin/python
STAMP=$VENV/.kgrag-graphrag-version
TIKTOKEN_DIR=$VENV/tiktoken-cache

# ready: the stamp names VERSION, the modules the oracle uses import, and
# tiktoken loads both encodings from TIKTOKEN_DIR.
ready() {
	[[ -x $PY && -f $STAMP && $(<"$STAMP") == "$VERSION" ]] &&
		TIKTOKEN_CACHE_DIR=$TIKTOKEN_DIR "$PY" -c '
import tiktoken
import graphrag.query.indexer_adapters
import graphrag.query.structured_search.local_search.mixed_context
for name in ("cl100k_base", "o200k_base"):
    tiktoken.get_encoding(name)
' >/dev/null 2>&1
}

# seed_tiktoken: copy tiktoken-go-loader's BPE files into TIKTOKEN_DIR
# under the names tiktoken's cache gives them (sha1 of the download URL).
seed_tiktoken() {
	local dir
	dir=$(cd "$KGRAG_REPO" && go list -m -f '{{.Dir}}' github.com/pkoukk/tiktoken-go-loader) ||
		kg_die "go list: module github.com/pkoukk/tiktoken-go-loader not found"
	mkdir -p "$TIKTOKEN_DIR"
	"$PY" -c '
import hashlib, shutil, sys
src, dst = sys.argv[1], sys.argv[2]
base = "https://openaipublic.blob.core.windows.net/encodings/"
for name in ("cl100k_base", "o200k_base"):
    key = hashlib.sha1((base + name + ".tiktoken").encode()).hexdigest()
    shutil.copyfile(f"{src}/{name}.tiktoken", f"{dst}/{key}")
' "$dir/assets" "$TIKTOKEN_DIR"
}

kg_venv_enter "${1:-}"

if [[ -x $PY && -f $STAMP && $(<"$STAMP") == "$VERSION" ]]; then
	# Installed, but the tiktoken files are missing or stale.
	seed_tiktoken
	if ready; then
		echo "$PY"
		exit 0
	fi
fi

base=${KGRAG_GRAPHRAG_PYTHON:-}
if [[ -z $base ]]; then
	for c in python3.11 python3.12 python3.13 python3; do
		if command -v "$c" >/dev/null &&
			"$c" -c 'import sys; sys.exit(not ((3, 11) <= sys.version_info[:2] < (3, 14)))' 2>/dev/null; then
			base=$c
			break
		fi
	done
fi
[[ -n $base ]] || kg_die "no Python 3.11-3.13 found for graphrag $VERSION (set KGRAG_GRAPHRAG_PYTHON)"

kg_log "installing graphrag==$VERSION into $VENV with $("$base" --version 2>&1) (once; a few minutes)"
rm -rf "$VENV"
"$base" -m venv "$VENV" || kg_die "python venv failed in $VENV"
# --no-compile: Python compiles what it imports when first used.
"$PY" -m pip install --quiet --disable-pip-version-check --no-compile "graphrag==$VERSION" >&2 ||
	kg_die "pip install graphrag==$VERSION failed"
echo "$VERSION" >"$STAMP"
seed_tiktoken
ready || kg_die "graphrag $VERSION installed, but its query modules or tiktoken's encodings do not load"
kg_log "graphrag $VERSION ready"
echo "$PY"
