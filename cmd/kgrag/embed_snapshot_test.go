package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kgrag/kgrag/internal/globalsearch"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
	"github.com/kgrag/kgrag/internal/retrieval"
	"github.com/kgrag/kgrag/internal/snapshot"
	"github.com/kgrag/kgrag/internal/test"
)

// copyTables copies a sample's tables into a folder the test may change.
func copyTables(t *testing.T, sample string) string {
	t.Helper()
	src := filepath.Join(test.GraphRAGSamples(t), sample)
	dir := t.TempDir()
	files, err := filepath.Glob(filepath.Join(src, "*.parquet"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no tables in %s: %v", src, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestAskSnapshot: ask --input reads the snapshot kgrag embed wrote and
// prints the very context it prints from the parquet tables, in every
// mode that reads the graph; a stale or damaged snapshot is named in a
// warning and the tables are read instead.
func TestAskSnapshot(t *testing.T) {
	for _, sample := range []string{"v0.3.4", "v3"} {
		t.Run(sample, func(t *testing.T) {
			srv := llmtest.Start(t, llmtest.Config{Dim: askDim})
			in := copyTables(t, sample)
			index := t.TempDir()
			term, _, errb := testTerminal()
			eo := embedTestOptions(in, index, srv.URL(), askEmbedModel)
			eo.quiet = false
			if err := runEmbed(t.Context(), eo, term); err != nil {
				t.Fatal(err)
			}
			snap := filepath.Join(index, snapshot.File)
			if _, err := os.Stat(snap); err != nil || !strings.Contains(errb.String(), "wrote graph snapshot "+snap) {
				t.Fatalf("kgrag embed wrote no snapshot (%v); it said:\n%s", err, errb.String())
			}
			f := askFixture{input: in, index: index, srv: srv}
			ask := func(mode string) (out, warn string) {
				t.Helper()
				opts := f.options("Who is Scrooge, and what does he do at Christmas?")
				opts.mode, opts.contextOnly = mode, true
				if mode == modeGlobal {
					opts.global = globalOptions{params: retrieval.DefaultGlobalParams(), search: globalsearch.DefaultOptions()}
				}
				term, o, e := testTerminal()
				if err := runAsk(t.Context(), opts, term); err != nil {
					t.Fatalf("ask --mode %s: %v", mode, err)
				}
				return o.String(), e.String()
			}
			if d, fix := snapshotStatus(askOptions{input: in, index: indexOptions{path: index}}); !strings.Contains(d, "through "+snap+" (current") || fix != "" {
				t.Errorf("doctor says %q (fix %q) of a current snapshot", d, fix)
			}
			modes := []string{modeLocal, modeSPARQL, modeSubgraph, modeGlobal}
			fromSnap := map[string]string{}
			for _, m := range modes {
				out, warn := ask(m)
				if warn != "" || len(out) < 100 {
					t.Fatalf("--mode %s with the snapshot: stderr %q, %d bytes of context", m, warn, len(out))
				}
				fromSnap[m] = out
			}
			// The tables give the same contexts.
			if err := os.Rename(snap, snap+".aside"); err != nil {
				t.Fatal(err)
			}
			for _, m := range modes {
				if out, _ := ask(m); out != fromSnap[m] {
					t.Errorf("--mode %s: the context from the parquet tables differs from the snapshot's", m)
				}
			}
			if err := os.Rename(snap+".aside", snap); err != nil {
				t.Fatal(err)
			}

			// Stale: a table changed since kgrag embed.
			ents := filepath.Join(in, "entities.parquet")
			if sample == "v0.3.4" {
				ents = filepath.Join(in, "create_final_entities.parquet")
			}
			later := time.Now().Add(time.Minute)
			if err := os.Chtimes(ents, later, later); err != nil {
				t.Fatal(err)
			}
			if d, fix := snapshotStatus(askOptions{input: in, index: indexOptions{path: index}}); !strings.Contains(d, "out of date") || !strings.Contains(fix, "kgrag embed") {
				t.Errorf("doctor says %q (fix %q) of a stale snapshot", d, fix)
			}
			out, warn := ask(modeLocal)
			if out != fromSnap[modeLocal] || !strings.Contains(warn, "out of date") || !strings.Contains(warn, filepath.Base(ents)) ||
				!strings.Contains(warn, "kgrag embed --input "+in) {
				t.Errorf("stale snapshot: warned %q; context the same: %v", warn, out == fromSnap[modeLocal])
			}

			// Damaged: not a snapshot at all.
			if err := os.WriteFile(snap, []byte("not a snapshot"), 0o644); err != nil {
				t.Fatal(err)
			}
			out, warn = ask(modeLocal)
			if out != fromSnap[modeLocal] || !strings.Contains(warn, "not a valid kgrag graph snapshot") {
				t.Errorf("damaged snapshot: warned %q; context the same: %v", warn, out == fromSnap[modeLocal])
			}
		})
	}
}
