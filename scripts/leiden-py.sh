#!/usr/bin/env bash
# leiden-py.sh: a Python venv holding the Leiden implementations that
# kgrag's own (internal/leiden) is checked against and timed with
# (scripts/oracle/leiden.py): leidenalg on python-igraph (Traag's C++
# reference code) and graspologic-native (the Rust code behind
# graspologic's and GraphRAG's hierarchical_leiden).
#
# Usage: scripts/leiden-py.sh           install when needed; print the venv's python
#        scripts/leiden-py.sh --check   print the venv's python if it is ready, else exit 1
#
# The venv is $KGRAG_LEIDEN_VENV (default .cache/leiden-py in the
# repository). A stamp file records the pinned versions; when it matches
# and the modules import, nothing is fetched, so a second run works
# offline. Callers running at once (tests, bench) are serialised by a lock
# beside the venv.
#
# Environment:
#   KGRAG_LEIDEN_PYTHON  interpreter that makes the venv (default python3)
#   KGRAG_LEIDEN_VENV    where the venv goes
#
# EXIT STATUS: 0 ready (the python path is on stdout); 1 install failed or,
# with --check, not installed.
set -euo pipefail
KG_NAME=leiden-py
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

# graspologic-native 1.2.5 is the release GraphRAG 3.3.0 installs
# (graspologic-native>=1.2,<1.3); leidenalg 0.12.0 runs on igraph 1.0.
PINS=(leidenalg==0.12.0 igraph==1.0.0 graspologic-native==1.2.5)
VENV=${KGRAG_LEIDEN_VENV:-$KGRAG_REPO/.cache/leiden-py}
PY=$VENV/bin/python
STAMP=$VENV/.kgrag-leiden-pins

ready() {
	[[ -x $PY && -f $STAMP && $(<"$STAMP") == "${PINS[*]}" ]] &&
		"$PY" -c 'import igraph, leidenalg, graspologic_native' >/dev/null 2>&1
}

kg_venv_enter "${1:-}"

kg_venv_install "${KGRAG_LEIDEN_PYTHON:-python3}"
