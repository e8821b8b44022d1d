package export_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/export"
	"github.com/kgrag/kgrag/internal/test"
)

// TestToFile writes the four samples as N-Triples on every core and on
// one: the same bytes, as many lines as the triples counted, and the
// progress calls add up to them.
func TestToFile(t *testing.T) {
	for _, v := range []string{"v0.3.4", "v1.0.1", "v2.5.0", "v3"} {
		t.Run(v, func(t *testing.T) {
			o := export.Options{Input: filepath.Join(test.GraphRAGSamples(t), v), Policy: graphrag.DefaultPolicy(), Base: "http://example.org/kg/"}
			dir := t.TempDir()
			var outs [2][]byte
			for i, serial := range []bool{false, true} {
				var progressed int64
				o.Serial, o.Progress = serial, func(n int64) { progressed += n }
				path := filepath.Join(dir, "out.nt")
				res, err := export.ToFile(context.Background(), path, nil, export.NTriples, o)
				if err != nil {
					t.Fatal(err)
				}
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if lines := int64(bytes.Count(b, []byte("\n"))); lines != res.Stats.Triples || progressed != lines {
					t.Errorf("serial %v: %d lines, %d triples counted, %d progressed", serial, lines, res.Stats.Triples, progressed)
				}
				if res.Dataset == nil || res.Dataset.Release == "" {
					t.Errorf("serial %v: no release in the result", serial)
				}
				outs[i] = b
			}
			if !bytes.Equal(outs[0], outs[1]) {
				t.Error("the concurrent and serial outputs differ")
			}
		})
	}
}

// TestToFileLeavesNothing: an input that cannot be read leaves no file.
func TestToFileLeavesNothing(t *testing.T) {
	bad := t.TempDir()
	if err := os.WriteFile(filepath.Join(bad, "entities.parquet"), []byte("not parquet"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out.ttl")
	_, err := export.ToFile(context.Background(), out, nil, export.Turtle, export.Options{Input: bad, Policy: graphrag.DefaultPolicy(), Base: "http://example.org/kg/"})
	if err == nil || !strings.Contains(err.Error(), "entities") {
		t.Errorf("err = %v; want one naming the entities table", err)
	}
	if _, serr := os.Stat(out); !os.IsNotExist(serr) {
		t.Errorf("%s exists after a failed load", out)
	}
}
