package main

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
}

func TestConfigFromEnv(t *testing.T) {
	for _, tt := range []struct {
		name  string
		vars  map[string]string
		check func(c config) string
	}{
		{"defaults", nil, func(c config) string {
			if c.Entities != 100000 || c.Relationships != 300000 || c.Count != 6 || c.MemLimit != "900MiB" ||
				!slices.Equal(c.UploadBatches, []string{"fuseki"}) || c.Ports["virtuoso"] != 18890 ||
				!slices.Equal(c.Steps, allSteps()) || !slices.Equal(c.IndexConcurrency, []string{"1", "4", "8"}) {
				return "not the documented defaults"
			}
			return ""
		}},
		{"quick", map[string]string{"BENCH_QUICK": "1"}, func(c config) string {
			if c.Entities != 10000 || c.Communities != 500 || c.IndexCount != 2 || c.ServeSoak != 5000 ||
				!slices.Equal(c.IndexConcurrency, []string{"4", "8"}) {
				return "not the quick defaults"
			}
			return ""
		}},
		{"set but empty", map[string]string{"BENCH_CONVERT_MEMLIMIT": "", "BENCH_UPLOAD_BATCHES": "", "BENCH_COUNT": ""}, func(c config) string {
			if c.MemLimit != "" || len(c.UploadBatches) != 0 || c.Count != 6 {
				return "an empty BENCH_CONVERT_MEMLIMIT or BENCH_UPLOAD_BATCHES means none; an empty BENCH_COUNT the default"
			}
			return ""
		}},
		{"values", map[string]string{"BENCH_STEPS": "leiden micro", "BENCH_ENTITIES": "30000", "BENCH_OPEN_N": "100000 1000000"}, func(c config) string {
			if !slices.Equal(c.Steps, []string{"leiden", "micro"}) || c.Entities != 30000 || !slices.Equal(c.OpenSizes, []int{100000, 1000000}) {
				return "values not read"
			}
			return ""
		}},
	} {
		c, err := configFromEnv(env(tt.vars))
		if err != nil {
			t.Errorf("%s: configFromEnv: %v", tt.name, err)
			continue
		}
		if msg := tt.check(c); msg != "" {
			t.Errorf("%s: %s: %+v", tt.name, msg, c)
		}
	}
	for _, bad := range []map[string]string{{"BENCH_COUNT": "six"}, {"BENCH_OPEN_N": "1e5"}} {
		if _, err := configFromEnv(env(bad)); err == nil {
			t.Errorf("configFromEnv(%v): no error", bad)
		}
	}
}

func TestParseConfigSteps(t *testing.T) {
	t.Setenv("BENCH_STEPS", "")
	var stderr strings.Builder
	c, err := parseConfig([]string{"-steps", "leiden,micro,leiden"}, &stderr)
	if err != nil || !slices.Equal(c.Steps, []string{"micro", "leiden"}) {
		t.Errorf("parseConfig(-steps leiden,micro,leiden) = %v, %v; want micro leiden, in the steps' order", c.Steps, err)
	}
	if _, err := parseConfig([]string{"-steps", "nope"}, &stderr); err == nil {
		t.Errorf("parseConfig(-steps nope): no error")
	}
}

func TestHNSWFigures(t *testing.T) {
	out := `| kgrag exact scan | 100000 | 0.1 s | 293 MB | 40.1 ms | 44.0 ms | 1.0000 | |
| kgrag HNSW | 100000 | 95.3 s | 330 MB | 0.9 ms | 1.4 ms | 0.9912 | efSearch 64 |
| kgrag HNSW, second | 100000 | 1 s | 1 MB | 7 ms | 9 ms | 0.5 | |`
	p50, rec := hnswFigures(out)
	if p50 != 0.9 || rec != 0.9912 {
		t.Errorf("hnswFigures = %v, %v; want 0.9, 0.9912", p50, rec)
	}
	if p50, rec := hnswFigures("| Elasticsearch | x |"); !math.IsNaN(p50) || !math.IsNaN(rec) {
		t.Errorf("hnswFigures(no HNSW row) = %v, %v; want NaN", p50, rec)
	}
}

func TestProfileShares(t *testing.T) {
	top := `File: index.test
Showing nodes accounting for 1.2s, 40% of 3s total
Total samples = 3s (100.00%)
      flat  flat%   sum%        cum   cum%
     0.01s  0.33%  0.33%      2.50s 83.33%  github.com/kgrag/kgrag/internal/indexer.(*run).communities
         0     0%  0.33%      0.30s 10.00%  github.com/kgrag/kgrag/internal/tokens.NewEncoder
`
	total, shares := profileShares(top, []string{"tokens.NewEncoder", "indexer.(*run).communities", "documents.Read"})
	want := [][3]string{{"tokens.NewEncoder", "0.30s", "10.00%"}, {"indexer.(*run).communities", "2.50s", "83.33%"}}
	if total != "3s" || !slices.Equal(shares, want) {
		t.Errorf("profileShares = %q, %v; want 3s, %v", total, shares, want)
	}
}

func TestSlowOf(t *testing.T) {
	var qs []traceQuestion
	for i := 1; i <= 40; i++ {
		qs = append(qs, traceQuestion{TotalMS: float64(i), Lookups: map[string]lookupAverage{"entities": {MS: float64(i) / 2, Rows: 10}}})
	}
	s := slowOf(qs)
	if s.Slowest != 2 || s.SlowMS != 39.5 || s.MiddleMS != 20.5 || s.Slow["entities"].MS != 19.75 || s.Slow["reports"].Rows != 0 {
		t.Errorf("slowOf = %+v", s)
	}
	if got := s.cells()[0]; got != "2 slowest: 39.5 ms; middle half: 20.5 ms" {
		t.Errorf("cells()[0] = %q", got)
	}
}

func TestLeidenRow(t *testing.T) {
	k := leidenKgrag{Nodes: 535, Edges: 916}
	k.Hierarchical.Seconds, k.Leiden.Seconds, k.Leiden.Modularity = 0.0007, 0.0006, 0.68
	k.Hierarchical.Levels = []leidenLevel{{0.6825}}
	gh := &leidenRun{Seconds: 0.0026}
	la := &leidenRun{Seconds: 0.0003, Modularity: 0.7}
	p := &leidenPeers{Leidenalg: la}
	p.Graspologic.Hierarchical = gh
	got := leidenRow("sample", k, p)
	for _, want := range []string{"| 0.7 ms | 2.6 ms | 0.27 (met) |", "0.3 ms (MISSED)", "| 0.6825 | n/a |", "0.6800 / nan / 0.7000 |"} {
		if !strings.Contains(got, want) {
			t.Errorf("leidenRow = %q; want it to hold %q", got, want)
		}
	}
	if got := leidenRow("x", k, nil); !strings.Contains(got, "| n/a | n/a |") {
		t.Errorf("leidenRow without peers = %q", got)
	}
}

func TestDiffRow(t *testing.T) {
	l := diffLoad{Store: "oxigraph", Full: 100, FullRSS: 400, FullSRSS: storeMem{1900, 1950}, Diff: 4, DiffRSS: 250, DiffSRSS: storeMem{500, 20000},
		Deleted: "12345", Inserted: "12000", InStore: 1000000, Percent: 4}
	if got, want := l.row(1000000), "| oxigraph | 100.00 s (kgrag 400 MB, store 1900 MB) | 4.00 s (kgrag 250 MB, store 500 (20000 with mapped files) MB) | 12,345 / 12,000 | 1,000,000 of 1,000,000 | 4.0% (met) |\n"; got != want {
		t.Errorf("row = %q; want %q", got, want)
	}
	l = diffLoad{Store: "fuseki", Full: num(math.NaN()), Note: "not run: fuseki did not start"}
	if got := l.row(1); !strings.HasPrefix(got, "| fuseki | not run: fuseki did not start |") {
		t.Errorf("row = %q", got)
	}
}
