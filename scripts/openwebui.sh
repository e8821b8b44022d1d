#!/usr/bin/env bash
# openwebui.sh: Open WebUI (PyPI open-webui), the chat UI many Ollama
# users run, installed offline-capable for the test that asks kgrag serve
# a question through its page in headless Chromium.
#
# Usage: scripts/openwebui.sh install        install when needed; print the venv
#        scripts/openwebui.sh --check        print the venv if ready, else exit 1
#        scripts/openwebui.sh run PORT URL DATA_DIR
#                                           run it in the foreground on
#                                           127.0.0.1:PORT, its one connection
#                                           the OpenAI API at URL (kgrag serve's
#                                           /v1), its state in DATA_DIR
#
# Open WebUI pulls in PyTorch with CUDA (several GB) for local embedding
# and speech models. kgrag's test uses none of them: install resolves the
# full set with pip's --dry-run --report, then installs it without torch,
# triton and the nvidia-* packages (--no-deps); run turns off every
# feature that would load a model or reach the internet.
set -euo pipefail
KG_NAME=openwebui
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

PIN=open-webui==0.12.4
VENV=${KGRAG_OPENWEBUI_VENV:-$KGRAG_REPO/.cache/openwebui}
STAMP=$VENV/.kgrag-pin

ready() { [[ -f $STAMP && $(<"$STAMP") == "$PIN" && -x $VENV/bin/open-webui ]]; }

install() {
	if ready; then
		echo "$VENV"
		return
	fi
	local t0 tmp
	t0=$(date +%s%N)
	kg_log "installing $PIN into $VENV without PyTorch and CUDA (once; about 2.2 GB)"
	rm -rf "$VENV"
	python3 -m venv "$VENV" || kg_die "python venv failed in $VENV"
	tmp=$(mktemp -d)
	# shellcheck disable=SC2064 # expand tmp now
	trap "rm -rf '$tmp'" RETURN
	"$VENV/bin/pip" install --quiet --disable-pip-version-check --dry-run --ignore-installed --report "$tmp/report.json" "$PIN" >&2 ||
		kg_die "pip could not resolve $PIN"
	"$VENV/bin/python" - "$tmp/report.json" >"$tmp/reqs.txt" <<'PY'
import json, sys
for it in json.load(open(sys.argv[1]))["install"]:
    m = it["metadata"]
    if not m["name"].lower().startswith(("torch", "triton", "nvidia-")):
        print(f"{m['name']}=={m['version']}")
PY
	# --no-compile: Python compiles what it imports when first used; byte-
	# compiling all 2.2 GB up front takes CPU the tests beside it need.
	"$VENV/bin/pip" install --quiet --disable-pip-version-check --no-compile --no-deps -r "$tmp/reqs.txt" >&2 || kg_die "pip install of $PIN's packages failed"
	echo "$PIN" >"$STAMP"
	kg_log "ready in $(kg_ms_since "$t0") ms"
	echo "$VENV"
}

case ${1:-install} in
install) install ;;
--check)
	ready || exit 1
	echo "$VENV"
	;;
run)
	[[ $# == 4 ]] || kg_die "usage: $0 run PORT URL DATA_DIR"
	ready || kg_die "not installed: run $0 install"
	port=$2 url=$3 data=$4
	mkdir -p "$data"
	export DATA_DIR=$data PORT=$port HOST=127.0.0.1 \
		OFFLINE_MODE=true HF_HUB_OFFLINE=1 WEBUI_AUTH=False ENABLE_PERSISTENT_CONFIG=False \
		ENABLE_OLLAMA_API=False ENABLE_OPENAI_API=True OPENAI_API_BASE_URL=$url OPENAI_API_KEY=${KGRAG_OPENWEBUI_KEY:-unused} \
		RAG_EMBEDDING_ENGINE=openai RAG_EMBEDDING_MODEL=none BYPASS_EMBEDDING_AND_RETRIEVAL=True \
		ENABLE_TITLE_GENERATION=False ENABLE_TAGS_GENERATION=False ENABLE_FOLLOW_UP_GENERATION=False \
		ENABLE_AUTOCOMPLETE_GENERATION=False ENABLE_RETRIEVAL_QUERY_GENERATION=False ENABLE_SEARCH_QUERY_GENERATION=False \
		ENABLE_IMAGE_GENERATION=False ENABLE_WEB_SEARCH=False ENABLE_CODE_INTERPRETER=False ENABLE_COMMUNITY_SHARING=False \
		ENABLE_VERSION_UPDATE_CHECK=False ENABLE_EVALUATION_ARENA_MODELS=False AUDIO_STT_ENGINE=openai \
		SCARF_NO_ANALYTICS=true DO_NOT_TRACK=true ANONYMIZED_TELEMETRY=false WEBUI_SECRET_KEY=kgrag-test-only
	exec "$VENV/bin/open-webui" serve --host 127.0.0.1 --port "$port"
	;;
*) kg_die "usage: $0 install|--check|run PORT URL DATA_DIR" ;;
esac
