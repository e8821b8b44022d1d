#!/usr/bin/env bash
# test-clients.sh: the tests of kgrag serve with clients whose install is
# large (what `make test-clients` and CI run after `make test`): Open
# WebUI, about 2.2 GB even without its local models, driven in headless
# Chromium.
#
# Usage: scripts/test-clients.sh [go test flags]
set -euo pipefail
KG_NAME='test-clients'
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
cd "$KGRAG_REPO"

"$here/openwebui.sh" install >/dev/null
"$here/chromium.sh" >/dev/null
KGRAG_TEST_OPENWEBUI=1 go test -count=1 -timeout 20m -run 'TestServeOpenWebUI' "$@" ./cmd/kgrag/
