package main

import (
	"cmp"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// config is every setting of a run. configFromEnv fills it from the BENCH_*
// variables and their documented defaults; a bad value fails at start.
type config struct {
	Steps []string
	Out   string // BENCH_DIR
	Kgrag string // KGRAG
	Quick bool   // BENCH_QUICK=1

	Entities, Relationships, TextUnits, Communities, Seed int

	Python        string
	Sample        string // BENCH_SAMPLE
	TestData      string // KGRAG_TESTDATA
	Count         int    // go test -count
	Repeat        int    // runs of each kgrag conversion
	MemLimit      string // BENCH_CONVERT_MEMLIMIT; "" skips that run
	RDFLibMax     int
	Stores        []string
	RetStores     []string
	DiffStores    []string
	UploadBatches []string
	SkipAtomic    []string
	SkipKgrag     []string
	JavaHeap      string
	BatchSize     string
	Ports         map[string]int // oxigraph, fuseki, virtuoso
	Settle        int

	RetrievalN, RetrievalPyMax int
	RetrievalBulk              bool

	GlobalN, GlobalRepeat int
	LeidenRepeat          int

	IndexCount, IndexWords int
	IndexConcurrency       []string

	ServeN, ServeSoak, ServeAskN, ServePort, LLMTestPort int

	KnnSizes                         []string
	KnnDim, KnnQueries, KnnOpens     int
	KnnES, KnnESCluster              string
	KnnESMax                         int
	OpenSizes                        []int
	OpenDim, OpenQuestions, OpenPort int
	// EvalPort is the eval step's test model server; MultihopPort the
	// multihop step's real one.
	EvalPort, MultihopPort    int
	OpenServePort, OpenServeN int
	OpenANN                   string
}

// envHelp documents the variables in -help.
const envHelp = `
Environment (flags override):
  BENCH_QUICK=1        small synthetic dataset (10k entities) for a fast check
  BENCH_ENTITIES, BENCH_RELATIONSHIPS, BENCH_TEXT_UNITS, BENCH_COMMUNITIES,
  BENCH_SEED           synthetic sizes and seed (default 100000, 300000,
                       20000, 5000, seed 1; quick: a tenth of those)
  BENCH_STEPS          steps to run (default all)
  BENCH_DIR            cache and report directory (default .cache/bench)
  BENCH_SAMPLE         real GraphRAG 3.x output (default
                       /work/shared/testdata/graphrag/v3)
  KGRAG_TESTDATA       the shared test data, for the book
  KGRAG                the kgrag binary (default bin/kgrag)
  BENCH_COUNT          go test -count (default 6)
  BENCH_REPEAT         runs of each kgrag conversion, median reported (3)
  BENCH_CONVERT_MEMLIMIT  GOMEMLIMIT of an extra conversion (900MiB; empty: none)
  BENCH_RDFLIB_MAX     largest synthetic set rdflib converts (100000 entities)
  BENCH_STORES         stores step (default "oxigraph fuseki virtuoso")
  BENCH_UPLOAD_BATCHES, BENCH_SKIP_ATOMIC, BENCH_SKIP_KGRAG
                       stores loaded also in batches (fuseki), whose atomic
                       load or whose kgrag loads are skipped
  BENCH_JAVA_HEAP      Fuseki and tdb2.tdbloader heap (2g)
  BENCH_BATCH_SIZE     kgrag load --batch-size (default: kgrag's own)
  BENCH_OXIGRAPH_PORT (17878), BENCH_FUSEKI_PORT (13030), BENCH_VIRTUOSO_PORT (18890)
  BENCH_RETRIEVAL_N, BENCH_RETRIEVAL_STORES, BENCH_RETRIEVAL_BULK,
  BENCH_RETRIEVAL_PY_MAX, BENCH_SETTLE          retrieval step
  BENCH_GLOBAL_N, BENCH_GLOBAL_REPEAT            global step
  BENCH_LEIDEN_REPEAT                            leiden step
  BENCH_INDEX_COUNT, BENCH_INDEX_WORDS, BENCH_INDEX_CONCURRENCY  index and fast steps
  BENCH_SERVE_N, BENCH_SERVE_SOAK, BENCH_SERVE_ASK_N, BENCH_SERVE_PORT,
  BENCH_LLMTEST_PORT                             serve step
  BENCH_DIFF_STORES                              diff step (oxigraph fuseki virtuoso)
  BENCH_KNN_N, BENCH_KNN_DIM, BENCH_KNN_QUERIES, BENCH_KNN_ES,
  BENCH_KNN_ES_MAX, BENCH_KNN_OPENS,
  BENCH_KNN_ES_CLUSTER (node URLs; "start", the default: the one
  scripts/es-cluster.sh runs, or started and stopped after; "none": not run)
                                                 knn step
  BENCH_OPEN_N, BENCH_OPEN_DIM, BENCH_OPEN_QUESTIONS, BENCH_OPEN_ANN,
  BENCH_OPEN_LLMTEST_PORT, BENCH_OPEN_SERVE_PORT, BENCH_OPEN_SERVE_N  open step
  BENCH_EVAL_LLMTEST_PORT  eval step (default 11555)
  BENCH_MULTIHOP_MODELS_PORT  multihop step's model server, scripts/models.sh (default 11565)
`

// envReader reads variables through get and keeps the first bad value.
type envReader struct {
	get func(string) string
	err error
}

func (e *envReader) str(name, def string) string {
	if v := e.get(name); v != "" {
		return v
	}
	return def
}

// strSet is str for variables whose empty value means something
// (bash's ${NAME-default}); lookup reports whether it is set.
func strSet(lookup func(string) (string, bool), name, def string) string {
	if v, ok := lookup(name); ok {
		return v
	}
	return def
}

func (e *envReader) int(name string, def int) int {
	v := e.get(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil && e.err == nil {
		e.err = fmt.Errorf("%s=%q: not an integer", name, v)
	}
	return n
}

func (e *envReader) list(name, def string) []string {
	return strings.Fields(e.str(name, def))
}

// quick returns full, or full/10 with BENCH_QUICK=1.
func quick(q bool, full, small int) int {
	if q {
		return small
	}
	return full
}

// configFromEnv reads the environment through lookup.
func configFromEnv(lookup func(string) (string, bool)) (config, error) {
	e := &envReader{get: func(k string) string { v, _ := lookup(k); return v }}
	q := e.get("BENCH_QUICK") == "1"
	testData := e.str("KGRAG_TESTDATA", "/work/shared/testdata")
	c := config{
		Steps:         e.list("BENCH_STEPS", strings.Join(allSteps(), " ")),
		Out:           e.str("BENCH_DIR", filepath.Join(".cache", "bench")),
		Kgrag:         e.str("KGRAG", filepath.Join("bin", "kgrag")),
		Quick:         q,
		Entities:      e.int("BENCH_ENTITIES", quick(q, 100000, 10000)),
		Relationships: e.int("BENCH_RELATIONSHIPS", quick(q, 300000, 30000)),
		TextUnits:     e.int("BENCH_TEXT_UNITS", quick(q, 20000, 2000)),
		Communities:   e.int("BENCH_COMMUNITIES", quick(q, 5000, 500)),
		Seed:          e.int("BENCH_SEED", 1),
		Python:        e.str("PYTHON", "python3"),
		Sample:        e.str("BENCH_SAMPLE", "/work/shared/testdata/graphrag/v3"),
		TestData:      testData,
		Count:         e.int("BENCH_COUNT", 6),
		Repeat:        e.int("BENCH_REPEAT", 3),
		MemLimit:      strSet(lookup, "BENCH_CONVERT_MEMLIMIT", "900MiB"),
		RDFLibMax:     e.int("BENCH_RDFLIB_MAX", 100000),
		Stores:        e.list("BENCH_STORES", "oxigraph fuseki virtuoso"),
		RetStores:     e.list("BENCH_RETRIEVAL_STORES", "oxigraph fuseki virtuoso"),
		DiffStores:    e.list("BENCH_DIFF_STORES", "oxigraph fuseki virtuoso"),
		UploadBatches: strings.Fields(strSet(lookup, "BENCH_UPLOAD_BATCHES", "fuseki")),
		SkipAtomic:    e.list("BENCH_SKIP_ATOMIC", ""),
		SkipKgrag:     e.list("BENCH_SKIP_KGRAG", ""),
		JavaHeap:      e.str("BENCH_JAVA_HEAP", "2g"),
		BatchSize:     e.str("BENCH_BATCH_SIZE", ""),
		Ports: map[string]int{
			"oxigraph": e.int("BENCH_OXIGRAPH_PORT", 17878),
			"fuseki":   e.int("BENCH_FUSEKI_PORT", 13030),
			"virtuoso": e.int("BENCH_VIRTUOSO_PORT", 18890),
		},
		Settle:           e.int("BENCH_SETTLE", 300),
		RetrievalN:       e.int("BENCH_RETRIEVAL_N", 100),
		RetrievalPyMax:   e.int("BENCH_RETRIEVAL_PY_MAX", 100000),
		RetrievalBulk:    e.get("BENCH_RETRIEVAL_BULK") != "",
		GlobalN:          e.int("BENCH_GLOBAL_N", 20),
		GlobalRepeat:     e.int("BENCH_GLOBAL_REPEAT", 3),
		LeidenRepeat:     e.int("BENCH_LEIDEN_REPEAT", 3),
		IndexCount:       e.int("BENCH_INDEX_COUNT", quick(q, 5, 2)),
		IndexWords:       e.int("BENCH_INDEX_WORDS", quick(q, 4000, 2000)),
		IndexConcurrency: e.list("BENCH_INDEX_CONCURRENCY", map[bool]string{false: "1 4 8", true: "4 8"}[q]),
		ServeN:           e.int("BENCH_SERVE_N", quick(q, 2000, 500)),
		ServeSoak:        e.int("BENCH_SERVE_SOAK", quick(q, 100000, 5000)),
		ServeAskN:        e.int("BENCH_SERVE_ASK_N", quick(q, 20, 5)),
		ServePort:        e.int("BENCH_SERVE_PORT", 18765),
		LLMTestPort:      e.int("BENCH_LLMTEST_PORT", 11535),
		KnnSizes:         e.list("BENCH_KNN_N", "100000"),
		KnnDim:           e.int("BENCH_KNN_DIM", 768),
		KnnQueries:       e.int("BENCH_KNN_QUERIES", 500),
		KnnES:            e.str("BENCH_KNN_ES", e.get("KGRAG_TEST_ELASTICSEARCH")),
		KnnESMax:         e.int("BENCH_KNN_ES_MAX", 100000),
		KnnESCluster:     e.str("BENCH_KNN_ES_CLUSTER", cmp.Or(e.get("KGRAG_TEST_ES_CLUSTER"), "start")),
		KnnOpens:         e.int("BENCH_KNN_OPENS", 5),
		OpenDim:          e.int("BENCH_OPEN_DIM", 64),
		OpenQuestions:    e.int("BENCH_OPEN_QUESTIONS", 10),
		OpenPort:         e.int("BENCH_OPEN_LLMTEST_PORT", 11545),
		EvalPort:         e.int("BENCH_EVAL_LLMTEST_PORT", 11555),
		MultihopPort:     e.int("BENCH_MULTIHOP_MODELS_PORT", 11565),
		OpenServePort:    e.int("BENCH_OPEN_SERVE_PORT", 18775),
		OpenServeN:       e.int("BENCH_OPEN_SERVE_N", 200),
		OpenANN:          e.str("BENCH_OPEN_ANN", "off"),
	}
	for _, s := range e.list("BENCH_OPEN_N", "100000") {
		n, err := strconv.Atoi(s)
		if err != nil {
			return c, fmt.Errorf("BENCH_OPEN_N: %q is not an integer", s)
		}
		c.OpenSizes = append(c.OpenSizes, n)
	}
	return c, e.err
}

// synthDir is where the synthetic set of these sizes is cached. synthFormat
// names the layout kgrag-synth writes: bump it when the writer changes, so
// that a cached dataset written by an older one is made again (2: empty
// children lists rather than nulls; 3: id lists plainly encoded; 4: batches
// of wide rows cut at 256 KB).
const synthFormat = 4

func synthDir(out string, ent, rel, tu, com, seed int) string {
	return filepath.Join(out, "data", fmt.Sprintf("synth-f%d-e%d-r%d-t%d-c%d-s%d", synthFormat, ent, rel, tu, com, seed))
}
