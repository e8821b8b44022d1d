#!/usr/bin/env bash
# test.sh: run every Go test with the real stores up (what `make test` and
# CI run).
#
# Usage: scripts/test.sh [go test flags and packages]   (default: ./...)
#
# Starts Oxigraph, Fuseki, Virtuoso and Elasticsearch with scripts/services.sh (installing
# them when missing), a three-node Elasticsearch cluster with
# scripts/es-cluster.sh and the model server with scripts/models.sh, exports
# KGRAG_TEST_* from their env files, runs go test, and stops the services it
# started itself (those already running are left running). With
# KGRAG_TEST_DISALLOW_SKIP=1 (CI) a store or model server that cannot start
# fails the run, and so do tests that would skip for want of one.
set -euo pipefail
KG_NAME='test'
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
cd "$KGRAG_REPO"

started=()
models_started=0
cluster_started=0
cleanup() {
	if ((${#started[@]})); then
		"$here/services.sh" down "${started[@]}" || true
	fi
	if ((cluster_started)); then
		"$here/es-cluster.sh" stop || true
	fi
	if ((models_started)); then
		"$here/models.sh" stop || true
	fi
}
trap cleanup EXIT

# The shell scripts first: a warning fails the run as a test would.
"$here/shellcheck.sh"

for n in oxigraph fuseki virtuoso elasticsearch; do
	if ! "$here/$n.sh" status >/dev/null 2>&1; then
		started+=("$n")
	fi
done
up_rc=0
# Services started here get empty data dirs: the tests churn through GBs
# (TDB2 and RocksDB keep dead data), and a big Oxigraph dir opens slowly.
KGRAG_FRESH=1 "$here/services.sh" up || up_rc=$?
if ((up_rc != 0)); then
	if [[ ${KGRAG_TEST_DISALLOW_SKIP:-} == 1 ]]; then
		kg_die "services did not start (KGRAG_TEST_DISALLOW_SKIP=1)"
	fi
	kg_log "warning: some services did not start; their tests will skip"
fi
set -a
# shellcheck disable=SC1090
. "${KGRAG_SERVICES_ENV:-$KGRAG_REPO/.cache/services.env}"
set +a
# Three Elasticsearch nodes for the test that takes nodes away from a
# cluster (scripts/es-cluster.sh; ~1 min to start, 1.2 GB of heap).
if urls=$("$here/es-cluster.sh" status 2>/dev/null); then
	export KGRAG_TEST_ES_CLUSTER=$urls
else
	cluster_started=1
	if urls=$("$here/es-cluster.sh" start); then
		export KGRAG_TEST_ES_CLUSTER=$urls
	elif [[ ${KGRAG_TEST_DISALLOW_SKIP:-} == 1 ]]; then
		kg_die "the Elasticsearch cluster did not start (KGRAG_TEST_DISALLOW_SKIP=1)"
	else
		kg_log "warning: the Elasticsearch cluster did not start; its test will skip"
	fi
fi
# The real chat and embedding models of the end-to-end ask test (the first
# install compiles llama.cpp for a portable baseline; models.sh keeps the
# wheel). It has answered a chat and an embedding request when start returns.
"$here/models.sh" status >/dev/null 2>&1 || models_started=1
if "$here/models.sh" start >/dev/null; then
	set -a
	# shellcheck disable=SC1090
	. "${KGRAG_MODELS_ENV:-$KGRAG_REPO/.cache/models.env}"
	set +a
elif [[ ${KGRAG_TEST_DISALLOW_SKIP:-} == 1 ]]; then
	kg_die "the model server did not start (KGRAG_TEST_DISALLOW_SKIP=1)"
else
	kg_log "warning: the model server did not start; the end-to-end ask test will skip"
fi
# The oracles and the external parsers: pyarrow computes expected counts
# from the parquet files, pyoxigraph and Jena (scripts/jena.sh) parse and
# validate what kgrag writes.
if ! python3 -c 'import pyarrow, pyoxigraph' 2>/dev/null; then
	kg_log "installing pyarrow and pyoxigraph for python3"
	python3 -m pip install --quiet pyarrow "pyoxigraph==0.5.13"
fi
"$here/jena.sh" --install >/dev/null
"$here/graphrag-py.sh" >/dev/null || kg_log "warning: PyPI graphrag venv not installed; its comparison test will skip (fail in CI)"
"$here/pyclients.sh" >/dev/null || kg_log "warning: PyPI openai/mcp venv not installed; the client tests of kgrag serve will skip (fail in CI)"
"$here/chromium.sh" >/dev/null || kg_log "warning: chromium not installed; the web page test of kgrag serve will skip (fail in CI)"
"$here/nginx.sh" >/dev/null || kg_log "warning: nginx not unpacked; the reverse-proxy test of kgrag serve will skip (fail in CI)"
"$here/clients.sh" >/dev/null || kg_log "warning: LangChain, LlamaIndex, llm or the MCP Inspector not installed; the test of kgrag serve with them will skip (fail in CI)"
"$here/leiden-py.sh" >/dev/null || kg_log "warning: leidenalg/graspologic venv not installed; the Leiden comparison test will skip (fail in CI)"
"$here/spacy-models.sh" >/dev/null || kg_log "warning: spaCy models not unpacked; the comparison of kgrag index --method fast with GraphRAG's extractors will skip (fail in CI)"
export KGRAG_EXTERNAL=1

# compose.yaml is for users with Docker; no engine runs here, but the
# client can still check the file.
if docker compose version >/dev/null 2>&1; then
	docker compose -f compose.yaml config -q && kg_log "compose.yaml: valid (docker compose config)"
elif command -v docker-compose >/dev/null; then
	docker-compose -f compose.yaml config -q && kg_log "compose.yaml: valid (docker-compose config)"
else
	kg_log "compose.yaml: not checked (no docker compose client)"
fi

args=("$@")
((${#args[@]})) || args=(./...)
# When a test fails, the stores' own logs say whether one of them stalled
# (a checkpoint, a full thread pool): CI keeps only this output.
show_logs() {
	for n in oxigraph fuseki virtuoso elasticsearch models es-cluster/node1 es-cluster/node2 es-cluster/node3; do
		local f=$KGRAG_RUN/$n/server.log
		[[ -s $f ]] || continue
		echo "---- last lines of $f"
		tail -n 25 "$f" || true
	done
}
rc=0
if ((${#args[@]} == 1)) && [[ ${args[0]} == ./... ]]; then
	# The tests with the real models (one llama.cpp server, ~20 min) run
	# in a go test of their own beside all the others, which would
	# otherwise queue behind them in cmd/kgrag's one test binary.
	real='^Test(AskRealModels|AskGlobalRealModel|EvalRealModels|EvalChristmasCarolRealEmbedder|IndexThenAsk|IndexRealModel|IndexNothingFound|IndexRealModelReports|PromptTuneRealModel|ModesSmallModel)$'
	mkdir -p "$KGRAG_CACHE"
	real_log=$KGRAG_CACHE/test-real-models.log
	go test -timeout 40m -run "$real" ./cmd/kgrag >"$real_log" 2>&1 &
	real_pid=$!
	go test -timeout 40m -skip "$real" ./... || rc=$?
	real_rc=0
	wait "$real_pid" || real_rc=$?
	echo "---- go test -run '$real' ./cmd/kgrag (the real models)"
	cat "$real_log"
	((rc != 0)) || rc=$real_rc
else
	go test -timeout 40m "${args[@]}" || rc=$?
fi
if ((rc != 0)); then
	show_logs
	exit "$rc"
fi
# The parallel conversion and the snapshot share state between
# goroutines: the race detector is the test that catches a slip there.
if ((${#args[@]} == 1)) && [[ ${args[0]} == ./... ]]; then
	go test -race -short -timeout 20m ./internal/convert/ ./ontology/ ./internal/snapshot/
fi
