package graphrag_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/test"
)

// degreeOracle is pyarrow and plain Python computing the degree of each
// title of a release before 2.0 on their own: create_final_nodes's degree
// where it has the title, else the number of distinct neighbours among the
// relationships, a self-loop counting 2 (networkx's degree of an
// undirected graph).
const degreeOracle = `
import json, os, sys, pyarrow.parquet as pq
d = sys.argv[1]
r = pq.read_table(os.path.join(d, "create_final_relationships.parquet")).to_pydict()
nb = {}
for s, t in zip(r["source"], r["target"]):
    nb.setdefault(s, set()).add(t)
    nb.setdefault(t, set()).add(s)
deg = {k: len(v - {k}) + (2 if k in v else 0) for k, v in nb.items()}
nodes = os.path.join(d, "create_final_nodes.parquet")
if os.path.exists(nodes):
    n = pq.read_table(nodes, columns=["title", "degree"]).to_pydict()
    seen = set()
    for title, dg in zip(n["title"], n["degree"]):
        if title not in seen and dg is not None:
            seen.add(title)
            deg[title] = dg
print(json.dumps(deg))
`

func pyarrow(t *testing.T) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err == nil {
		err = exec.Command(py, "-c", "import pyarrow.parquet").Run()
	}
	if err != nil {
		test.SkipOrFail(t, "python3 with pyarrow not available: %v", err)
	}
	return py
}

// withoutNodes links the files of a sample but create_final_nodes into a
// new folder: an output whose entities keep no degree anywhere.
func withoutNodes(t *testing.T, dir string) string {
	t.Helper()
	out := t.TempDir()
	files, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f.Name() == "create_final_nodes.parquet" {
			continue
		}
		if err := os.Symlink(filepath.Join(dir, f.Name()), filepath.Join(out, f.Name())); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestOpenDegreeBefore2: releases before 2.0 keep entity degree only in
// create_final_nodes (or nowhere). Every entity of the entities table
// (placeholders get none, as in 2.x and 3.x) gets the degree the Python oracle gives, and a note says where it came
// from; without create_final_nodes the computed degree is GraphRAG's own
// number all the same (the oracle then computes it too).
func TestOpenDegreeBefore2(t *testing.T) {
	py := pyarrow(t)
	tests := []struct {
		name, dir string
		note      string
	}{
		{"v0.3.4", sample(t, "v0.3.4"), "entity degree read from create_final_nodes (263 titles)"},
		{"v1.0.1", sample(t, "v1.0.1"), "entity degree read from create_final_nodes (301 titles)"},
		{"v1.0.1 without nodes", withoutNodes(t, sample(t, "v1.0.1")), "entity degree computed from the relationships as GraphRAG computes it (301 titles)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := exec.Command(py, "-c", degreeOracle, tt.dir).Output()
			if err != nil {
				t.Fatalf("degree oracle: %v", err)
			}
			var want map[string]int64
			if err := json.Unmarshal(out, &want); err != nil {
				t.Fatal(err)
			}
			ds, err := graphrag.Open(context.Background(), tt.dir)
			if err != nil {
				t.Fatal(err)
			}
			nonzero := 0
			real := 0
			for _, e := range ds.Entities {
				if e.Placeholder {
					if e.HasDegree {
						t.Errorf("placeholder %q has degree %d; want none", e.Title, e.Degree)
					}
					continue
				}
				real++
				if !e.HasDegree {
					t.Errorf("entity %q has no degree", e.Title)
					continue
				}
				if e.Degree != want[e.Title] {
					t.Errorf("entity %q: degree %d; want %d", e.Title, e.Degree, want[e.Title])
				}
				if e.Degree > 0 {
					nonzero++
				}
			}
			// Most entities have relationships: a reader that gave every
			// entity 0 would pass the loop above only where the oracle
			// also says 0.
			if nonzero < real/2 {
				t.Errorf("%d of %d entities have a degree above 0", nonzero, real)
			}
			if !strings.Contains(strings.Join(ds.Notes, "\n"), tt.note) {
				t.Errorf("Notes = %q; want one saying %q", ds.Notes, tt.note)
			}
		})
	}
}

// TestDegreesAgainstGraphRAG: from 2.0 on GraphRAG writes entity degree
// itself; Degrees over the relationships gives the same number for every
// entity of the samples.
func TestDegreesAgainstGraphRAG(t *testing.T) {
	for _, name := range []string{"v2.5.0", "v3"} {
		t.Run(name, func(t *testing.T) {
			ds, err := graphrag.Open(context.Background(), sample(t, name))
			if err != nil {
				t.Fatal(err)
			}
			var d graphrag.Degrees
			for _, r := range ds.Relationships {
				d.Add(r.Source, r.Target)
			}
			checked := 0
			for _, e := range ds.Entities {
				if !e.HasDegree {
					continue // placeholders: GraphRAG has no row for them
				}
				checked++
				if got := d.Of(e.Title); got != e.Degree {
					t.Errorf("entity %q: Degrees %d; GraphRAG wrote %d", e.Title, got, e.Degree)
				}
			}
			if checked == 0 {
				t.Fatal("no entity with a degree")
			}
		})
	}
}

func TestDegrees(t *testing.T) {
	var d graphrag.Degrees
	for _, r := range [][2]string{{"A", "B"}, {"B", "A"}, {"A", "B"}, {"A", "A"}, {"B", "C"}} {
		d.Add(r[0], r[1])
	}
	for title, want := range map[string]int64{"A": 3, "B": 2, "C": 1, "D": 0} {
		if got := d.Of(title); got != want {
			t.Errorf("Of(%q) = %d; want %d", title, got, want)
		}
	}
}
