#!/usr/bin/env bash
# test.sh: run every Go test with the real stores up (what `make test` and
# CI run).
#
# Usage: scripts/test.sh [go test flags and packages]   (default: ./...)
#
# Starts Oxigraph, Fuseki, Virtuoso and Elasticsearch with scripts/services.sh (installing
# them when missing), a three-node Elasticsearch cluster with
# scripts/es-cluster.sh, two Fuseki copies with scripts/fuseki-replicas.sh
# and the model server with scripts/models.sh, exports
# KGRAG_TEST_* from their env files, runs go test, and stops the services it
# started itself (those already running are left running). With ./...
# the tests with the real models run in a go test of their own, started
# first and in the background (they need only the model server, and take
# longest), beside the others; the log says how long each phase took. With
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
ollama_started=0
cluster_started=0
copies_started=0
real_pid=""
# deps marks the end of the installs the real-model tests need.
deps=$KGRAG_CACHE/test-deps.$$
cleanup() {
	if [[ -n $real_pid ]] && kill -0 "$real_pid" 2>/dev/null; then
		kill -TERM -- "-$real_pid" 2>/dev/null || true
		wait "$real_pid" 2>/dev/null || true
	fi
	if ((${#started[@]})); then
		"$here/services.sh" down "${started[@]}" || true
	fi
	if ((cluster_started)); then
		"$here/es-cluster.sh" stop || true
	fi
	if ((copies_started)); then
		"$here/fuseki-replicas.sh" stop || true
	fi
	if ((models_started)); then
		"$here/models.sh" stop || true
	fi
	if ((ollama_started)); then
		"$here/ollama.sh" stop || true
	fi
	rm -f "$deps"
}
trap cleanup EXIT

t0=$(date +%s)
# phase logs the seconds since the start: CI keeps only this output, and
# says where a slow run spent its time.
phase() { kg_log "[$(($(date +%s) - t0))s] $*"; }

args=("$@")
((${#args[@]})) || args=(./...)
all=0
((${#args[@]} == 1)) && [[ ${args[0]} == ./... ]] && all=1
mkdir -p "$KGRAG_CACHE"

# external_tools installs the oracles and external parsers: pyarrow
# computes expected counts from the parquet files, pyoxigraph and Jena
# (scripts/jena.sh) parse and validate what kgrag writes, Chromium opens
# the pages kgrag writes and serves.
external_tools() {
	if ! python3 -c 'import pyarrow, pyoxigraph' 2>/dev/null; then
		kg_log "installing pyarrow and pyoxigraph for python3"
		python3 -m pip install --quiet pyarrow "pyoxigraph==0.5.13"
	fi
	"$here/jena.sh" --install >/dev/null
	if ! "$here/chromium.sh" >/dev/null; then
		kg_log "warning: chromium not installed; the tests that open a page in it will skip (fail in CI)"
	fi
}

# models_up starts the real chat and embedding models of the end-to-end
# tests (the first install compiles llama.cpp for a portable baseline, 8-12
# min on 2 cores; models.sh keeps the wheel) and exports their variables.
# It has answered a chat and an embedding request when start returns.
models_up() {
	if "$here/models.sh" start >/dev/null; then
		set -a
		# shellcheck disable=SC1090
		. "${KGRAG_MODELS_ENV:-$KGRAG_REPO/.cache/models.env}"
		set +a
	elif [[ ${KGRAG_TEST_DISALLOW_SKIP:-} == 1 ]]; then
		kg_die "the model server did not start (KGRAG_TEST_DISALLOW_SKIP=1)"
	else
		kg_log "warning: the model server did not start; the tests with real models will skip"
	fi
}
"$here/models.sh" status >/dev/null 2>&1 || models_started=1
"$here/ollama.sh" status >/dev/null 2>&1 || ollama_started=1

# ollama_up starts a real Ollama with the same models (scripts/ollama.sh,
# which builds it once: ~13 min on 2 cores) and exports its variables.
ollama_up() {
	if "$here/ollama.sh" start >/dev/null; then
		set -a
		# shellcheck disable=SC1090
		. "${KGRAG_OLLAMA_ENV:-$KGRAG_REPO/.cache/ollama.env}"
		set +a
	elif [[ ${KGRAG_TEST_DISALLOW_SKIP:-} == 1 ]]; then
		kg_die "Ollama did not start (KGRAG_TEST_DISALLOW_SKIP=1)"
	else
		kg_log "warning: Ollama did not start; the tests with it will skip"
	fi
}

# The tests with the real models need nothing but the model server, and
# they are the longest part of the run (one llama.cpp server on 2 cores):
# with ./... they start first, in a go test of their own in the
# background, as soon as the models are up, while the stores start and
# everything else is tested. Job control gives the job a process group
# that cleanup can stop whole.
real='^Test(AskRealModels|AskGlobalRealModel|EvalRealModels|EvalChristmasCarolRealEmbedder|IndexRealModel|IndexRealModelReports|PromptTuneRealModel|ModesSmallModel|ModesDefaultFlagsSmallWindow|EmbedWindowsFindLastThird|OllamaRealModels|ServeSmallWindowRealModel|MultihopRealEmbedder)$'
real_log=$KGRAG_CACHE/test-real-models.log
if ((all)); then
	set -m
	(
		# What the real-model tests need besides the models (Chromium for
		# the eval report, Jena and pyoxigraph for the Turtle), installed
		# here first; the foreground waits for it before its installs.
		external_tools
		touch "$deps"
		# Ollama's build (go install, cgo) beside llama.cpp's: both are
		# compiles of ggml, and the first to end waits for the other.
		"$here/ollama.sh" install >"$KGRAG_CACHE/ollama-install.log" 2>&1 &
		ollama_build=$!
		models_up
		phase "models up"
		if ! wait "$ollama_build"; then
			cat "$KGRAG_CACHE/ollama-install.log" >&2
			[[ ${KGRAG_TEST_DISALLOW_SKIP:-} == 1 ]] && kg_die "Ollama's build failed (KGRAG_TEST_DISALLOW_SKIP=1)"
		fi
		ollama_up
		phase "Ollama up; go test -run '$real' ./cmd/kgrag"
		export KGRAG_EXTERNAL=1
		rc=0
		go test -timeout 80m -run "$real" ./cmd/kgrag || rc=$?
		phase "the real-model tests ended (exit $rc)"
		exit "$rc"
	) >"$real_log" 2>&1 &
	real_pid=$!
	set +m
	phase "the real-model tests started in the background (log: $real_log)"
fi

# vet and gofmt (make vet), and the shell scripts: a warning fails the
# run as a test would.
# vet runs at a lower priority: it is pure CPU and can wait, while the
# llama.cpp build beside it is the start of the longest path. Only vet:
# with the whole script reniced (tried), the Elasticsearch nodes did not
# join within 90 s beside the real-model tests, and vet took 17 min.
((all)) && nice -n 10 "${MAKE:-make}" --no-print-directory -C "$KGRAG_REPO" vet
"$here/shellcheck.sh"
phase "vet and ShellCheck done"

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
phase "stores up"
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
phase "Elasticsearch cluster up"
# Two Fuseki copies of one store for the tests that kill one under a load
# or under questions (scripts/fuseki-replicas.sh; ~5 s, 1.5 GB of heap).
if urls=$("$here/fuseki-replicas.sh" status 2>/dev/null); then
	export KGRAG_TEST_FUSEKI_REPLICAS=$urls
else
	copies_started=1
	if urls=$("$here/fuseki-replicas.sh" start); then
		export KGRAG_TEST_FUSEKI_REPLICAS=$urls
	elif [[ ${KGRAG_TEST_DISALLOW_SKIP:-} == 1 ]]; then
		kg_die "the Fuseki copies did not start (KGRAG_TEST_DISALLOW_SKIP=1)"
	else
		kg_log "warning: the Fuseki copies did not start; their tests will skip"
	fi
fi
phase "Fuseki copies up"
((all)) || models_up
# The external tools (installed by the real-model job with ./...), then
# the venvs and programs of the other tests: independent installs that
# mostly wait on the network, run side by side, each with its log.
if ((all)); then
	until [[ -e $deps ]] || ! kill -0 "$real_pid" 2>/dev/null; do sleep 1; done
	[[ -e $deps ]] || kg_die "the real-model job ended before installing the external tools: $(tail -n 20 "$real_log")"
else
	external_tools
fi
declare -A what=(
	[graphrag-py]="PyPI graphrag venv not installed; its comparison test will skip (fail in CI)"
	[pyclients]="PyPI openai/mcp venv not installed; the client tests of kgrag serve will skip (fail in CI)"
	[nginx]="nginx not unpacked; the reverse-proxy test of kgrag serve will skip (fail in CI)"
	[clients]="LangChain, LlamaIndex, llm or the MCP Inspector not installed; the test of kgrag serve with them will skip (fail in CI)"
	[leiden-py]="leidenalg/graspologic venv not installed; the Leiden comparison test will skip (fail in CI)"
	[spacy-models]="spaCy models not unpacked; the comparison of kgrag index --method fast with GraphRAG's extractors will skip (fail in CI)"
)
declare -A pids=()
logs=$(mktemp -d)
for n in "${!what[@]}"; do
	"$here/$n.sh" >/dev/null 2>"$logs/$n" &
	pids[$n]=$!
done
for n in "${!pids[@]}"; do
	if wait "${pids[$n]}"; then
		cat "$logs/$n" >&2
	else
		cat "$logs/$n" >&2
		kg_log "warning: ${what[$n]}"
	fi
done
rm -rf "$logs"
export KGRAG_EXTERNAL=1
phase "installs done"

# compose.yaml is for users with Docker; no engine runs here, but the
# client can still check the file.
if docker compose version >/dev/null 2>&1; then
	docker compose -f compose.yaml config -q && kg_log "compose.yaml: valid (docker compose config)"
elif command -v docker-compose >/dev/null; then
	docker-compose -f compose.yaml config -q && kg_log "compose.yaml: valid (docker-compose config)"
else
	kg_log "compose.yaml: not checked (no docker compose client)"
fi

# When a test fails, the stores' own logs say whether one of them stalled
# (a checkpoint, a full thread pool): CI keeps only this output.
show_logs() {
	for n in oxigraph fuseki virtuoso elasticsearch models es-cluster/node1 es-cluster/node2 es-cluster/node3 fuseki-replicas/copy1 fuseki-replicas/copy2; do
		local f=$KGRAG_RUN/$n/server.log
		[[ -s $f ]] || continue
		echo "---- last lines of $f"
		tail -n 25 "$f" || true
	done
}
rc=0
if ((all)); then
	phase "go test -skip '$real' ./..."
	go test -timeout 40m -skip "$real" ./... || rc=$?
	phase "go test ./... ended (exit $rc); waiting for the real-model tests"
	real_rc=0
	wait "$real_pid" || real_rc=$?
	real_pid=""
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
if ((all)); then
	go test -race -short -timeout 20m ./internal/convert/ ./ontology/ ./internal/snapshot/
	phase "race tests done"
fi
