#!/usr/bin/env bash
# bench-retrieval-py.sh: Microsoft GraphRAG's local search context builder
# (PyPI graphrag, LocalSearchMixedContext.build_context) timed against
# kgrag's Builder.LocalContext on MemoryBackend, on the same selections of
# ranked entities, on the real 3.x sample and on the synthetic dataset.
#
# Usage: scripts/bench-retrieval-py.sh      (the retrieval step of make bench calls it)
#
# For each dataset: N selections of 10 distinct entity ids (Python's
# random.Random(seed).sample over the entities table) are written to a file;
# scripts/oracle/graphrag_local.py runs build_context on each (GraphRAG's
# defaults, cl100k_base, map_query_to_entities bypassed, loading not timed)
# and `go test -bench BenchmarkLocalContextSelections` runs kgrag on the same
# file (loading and indexing not timed). Both report the nearest-rank p50
# and p95 of the per-selection times. No embedding model and no LLM are
# involved on either side.
#
# Output: a Markdown table on stdout, also written to
# $BENCH_DIR/retrieval-py.md; raw outputs in $BENCH_DIR/run-retrieval-py/.
#
# Environment:
#   BENCH_RETRIEVAL_N    selections per dataset (default 100)
#   BENCH_QUICK=1        small synthetic dataset (10k entities)
#   BENCH_ENTITIES, BENCH_RELATIONSHIPS, BENCH_TEXT_UNITS, BENCH_COMMUNITIES,
#   BENCH_SEED           synthetic sizes and seed (as bench/run:
#                        100000, 300000, 20000, 5000, seed 1; the dataset is
#                        shared with it under $BENCH_DIR/data/)
#   BENCH_SAMPLE         real GraphRAG 3.x output (default
#                        ../shared/testdata/graphrag/v3 beside the repository)
#   BENCH_DIR            cache and report directory (default .cache/bench)
#   BENCH_SYNTH          the synthetic dataset's directory (bench/run's)
#
# EXIT STATUS: 0 when the table was written (a side that failed is shown as
# "failed" with its log); 1 when the harness itself failed (venv, dataset).
set -euo pipefail
KG_NAME=bench-retrieval-py
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
repo=$KGRAG_REPO
cd "$repo"

N=${BENCH_RETRIEVAL_N:-100}
# bench/run's synthetic dataset: same sizes, same cache path.
q=$([[ ${BENCH_QUICK:-0} == 1 ]] && echo 10 || echo 1)
N_ENT=${BENCH_ENTITIES:-$((100000 / q))} N_REL=${BENCH_RELATIONSHIPS:-$((300000 / q))}
N_TU=${BENCH_TEXT_UNITS:-$((20000 / q))} N_COM=${BENCH_COMMUNITIES:-$((5000 / q))} SEED=${BENCH_SEED:-1}
SAMPLE=${BENCH_SAMPLE:-${KGRAG_TESTDATA:-$repo/../shared/testdata}/graphrag/v3}
OUT=$(mkdir -p "${BENCH_DIR:-$repo/.cache/bench}" && cd "${BENCH_DIR:-$repo/.cache/bench}" && pwd)
# bench/run passes its dataset; alone, the path it would use (SYNTH_FORMAT 4).
SYNTH=${BENCH_SYNTH:-$OUT/data/synth-f4-e$N_ENT-r$N_REL-t$N_TU-c$N_COM-s$SEED}
RUN=$OUT/run-retrieval-py
REPORT=$OUT/retrieval-py.md

py=$("$here/graphrag-py.sh") || kg_die "PyPI graphrag venv: scripts/graphrag-py.sh failed"
gr_version=$(<"$(dirname "$(dirname "$py")")/.kgrag-graphrag-version")

[[ -f $SAMPLE/entities.parquet ]] || kg_die "no GraphRAG 3.x sample at $SAMPLE (set BENCH_SAMPLE)"
if [[ ! -f $SYNTH/.complete ]]; then
	kg_log "generating the synthetic dataset into $SYNTH"
	rm -rf "$SYNTH"
	go run ./cmd/kgrag-synth -out "$SYNTH" -seed "$SEED" \
		-entities "$N_ENT" -relationships "$N_REL" -text-units "$N_TU" -communities "$N_COM" >&2 ||
		kg_die "kgrag-synth failed"
	touch "$SYNTH/.complete"
fi

rm -rf "$RUN"
mkdir -p "$RUN"

# selections DIR FILE: N random selections of 10 entity ids of DIR.
selections() {
	"$py" - "$1" "$N" "$SEED" >"$2" <<'EOF'
import json, random, sys
import pyarrow.parquet as pq
d, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
ids = pq.read_table(d + "/entities.parquet", columns=["id"]).column("id").to_pylist()
rng = random.Random(seed)
for _ in range(n):
    print(json.dumps(rng.sample(ids, 10)))
EOF
}

# metric NAME FILE: the value go test -bench reported for metric NAME.
metric() {
	awk -v m="$1" '/^BenchmarkLocalContextSelections/ { for (i = 1; i < NF; i++) if ($(i + 1) == m) print $i }' "$2"
}

# py_times FILE: "p50 p95" in ms of the oracle's per-selection seconds.
py_times() {
	"$py" - "$1" <<'EOF'
import json, math, sys
s = sorted(json.loads(l)["seconds"] * 1000 for l in open(sys.argv[1]) if l.strip())
pct = lambda p: s[max(0, math.ceil(p * len(s) / 100) - 1)]
print(f"{pct(50):.1f} {pct(95):.1f}")
EOF
}

rows=()
for name in v3 synth; do
	dir=$SAMPLE
	label="GraphRAG 3.x sample (v3)"
	if [[ $name == synth ]]; then
		dir=$SYNTH
		label="synthetic, $N_ENT entities / $N_REL relationships"
	fi
	sel=$RUN/$name.selections.jsonl
	selections "$dir" "$sel" || kg_die "selections for $dir failed"

	kg_log "$name: GraphRAG build_context on $N selections"
	t0=$(date +%s%N)
	if "$py" "$here/oracle/graphrag_local.py" "$dir" <"$sel" >"$RUN/$name.graphrag.jsonl" 2>"$RUN/$name.graphrag.err"; then
		read -r py50 py95 < <(py_times "$RUN/$name.graphrag.jsonl")
		kg_log "  p50 ${py50} ms, p95 ${py95} ms (whole run incl. loading $(kg_ms_since "$t0") ms)"
	else
		py50="failed (${RUN#"$repo"/}/$name.graphrag.err)" py95=""
		kg_log "  failed: $(tail -n 1 "$RUN/$name.graphrag.err")"
	fi

	kg_log "$name: kgrag Builder.LocalContext on the same selections"
	if KGRAG_BENCH_DATA=$dir KGRAG_BENCH_SELECTIONS=$sel go test ./internal/retrieval -run '^$' \
		-bench '^BenchmarkLocalContextSelections$' -benchtime 1x >"$RUN/$name.kgrag.txt" 2>&1; then
		kg50=$(metric p50-ms "$RUN/$name.kgrag.txt") kg95=$(metric p95-ms "$RUN/$name.kgrag.txt")
		cold50=$(metric cold-p50-ms "$RUN/$name.kgrag.txt") cold95=$(metric cold-p95-ms "$RUN/$name.kgrag.txt")
		kg_log "  p50 ${kg50} ms, p95 ${kg95} ms; cold p50 ${cold50} ms, p95 ${cold95} ms"
	else
		kg50="failed (${RUN#"$repo"/}/$name.kgrag.txt)" kg95="" cold50="" cold95=""
		kg_log "  failed"
	fi
	speed=$(awk -v a="$py50" -v b="$kg50" -v c="$cold50" 'BEGIN {
		if (a + 0 > 0 && b + 0 > 0 && c + 0 > 0) printf "%.1fx (cold %.1fx)", a / b, a / c; else print "n/a" }')
	rows+=("| $label | $N | $py50 | $py95 | $kg50 | $kg95 | $cold50 | $cold95 | $speed |")
done

{
	echo "## Local search context: GraphRAG's builder vs kgrag"
	echo
	echo "Per-selection build time in ms (nearest-rank p50/p95), same selections of 10 ranked entities, GraphRAG's defaults (12000 tokens, cl100k_base); no embedding, no LLM, loading not timed."
	echo "GraphRAG: PyPI graphrag $gr_version, LocalSearchMixedContext.build_context ($("$py" --version 2>&1)). kgrag: Builder.LocalContext on MemoryBackend ($(go version | cut -d' ' -f3))."
	echo
	echo "kgrag cold: the first 30 selections, each on a fresh Encoder (its row-count memo empty), as one kgrag ask process answers one question."
	echo
	echo "| dataset | selections | GraphRAG p50 | GraphRAG p95 | kgrag p50 | kgrag p95 | kgrag cold p50 | kgrag cold p95 | GraphRAG/kgrag (p50) |"
	echo "|---|---|---|---|---|---|---|---|---|"
	printf '%s\n' "${rows[@]}"
} | tee "$REPORT"
