#!/usr/bin/env bash
# chromium.sh: make sure Debian's Chromium is installed, for the test that
# drives kgrag serve's web page in a real headless browser; print its path.
#
# Usage: scripts/chromium.sh           install when missing (apt-get, as root)
#        scripts/chromium.sh --check   print the path if installed, else exit 1
set -euo pipefail
KG_NAME=chromium
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

find_chromium() {
	local c
	for c in "${KGRAG_CHROMIUM:-}" chromium chromium-browser google-chrome; do
		[[ -n $c ]] && command -v "$c" && return 0
	done
	return 1
}

if find_chromium; then
	exit 0
fi
[[ ${1:-} == --check ]] && exit 1
command -v apt-get >/dev/null || kg_die "no chromium, and no apt-get to install it: install Chromium and set KGRAG_CHROMIUM"
sudo=""
[[ $(id -u) == 0 ]] || sudo="sudo"
kg_log "installing Debian's chromium (once; a minute)"
$sudo apt-get install -y -q chromium >&2 || { $sudo apt-get update -q >&2 && $sudo apt-get install -y -q chromium >&2; } ||
	kg_die "apt-get install chromium failed"
find_chromium || kg_die "chromium installed but not found on PATH"
