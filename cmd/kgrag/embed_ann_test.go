package main

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/embedindex/flat"
	"github.com/kgrag/kgrag/internal/embedtext"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
)

// TestEmbedANN: kgrag embed --ann on builds the graph into the flat file
// and prints the recall it measured (the figure kept in the file), and
// kgrag ask over that index gives the context the exact index gives; a
// small index under --ann auto stays exact.
func TestEmbedANN(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Config{Dim: askDim})
	exact := newSampleFixture(t, "v3", srv)

	ann := exact
	ann.index = t.TempDir()
	opts := embedTestOptions(exact.input, ann.index, srv.URL(), askEmbedModel)
	opts.ann = flat.ANNOn
	term, _, errb := testTerminal()
	if err := runEmbed(t.Context(), opts, term); err != nil {
		t.Fatal(err)
	}
	idx, err := flat.Open(t.Context(), filepath.Join(ann.index, entityIndexFile), flat.Options{})
	if err != nil {
		t.Fatal(err)
	}
	info := idx.Info()
	if info.ANN != flat.ANNName || info.Recall < 0.98 || info.EfSearch == 0 {
		t.Fatalf("--ann on: index info %+v; want an HNSW graph with recall >= 0.98", info)
	}
	want := fmt.Sprintf("of %d entities built in", v3Entities)
	rec := fmt.Sprintf("recall@10 %.3f against the exact scan (200 queries) at efSearch %d", info.Recall, info.EfSearch)
	if s := errb.String(); !strings.Contains(s, want) || !strings.Contains(s, rec) {
		t.Errorf("stderr = %q; want %q and %q", s, want, rec)
	}

	if x, err := flat.Open(t.Context(), filepath.Join(exact.index, entityIndexFile), flat.Options{}); err != nil || x.Info().ANN != "" {
		t.Fatalf("--ann auto on %d entities: info %+v, %v; want exact", v3Entities, x.Info(), err)
	}

	for _, title := range []string{"EBENEZER SCROOGE", "BOB CRATCHIT", "TINY TIM"} {
		e := exact.entity(t, title)
		var got [2]string
		for i, f := range []askFixture{exact, ann} {
			o := f.options(embedtext.Entity(e))
			o.contextOnly = true
			term, out, _ := testTerminal()
			if err := runAsk(t.Context(), o, term); err != nil {
				t.Fatal(err)
			}
			got[i] = out.String()
		}
		if got[0] != got[1] {
			t.Errorf("%s: context over the HNSW index differs from the exact one:\n%.400s\n---\n%.400s", title, got[1], got[0])
		}
		if !strings.Contains(got[1], "\n"+e.HumanReadableID+"|"+e.Title+"|") {
			t.Errorf("%s: context over the HNSW index does not hold the entity itself", title)
		}
	}
}

// TestEmbedANNFallback: under --ann auto, a graph that misses recall@10
// 0.98 at every efSearch (near-orthogonal vectors, a hashed bag of three
// words each) is dropped, and kgrag embed says the index is searched
// exactly.
func TestEmbedANNFallback(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	ids := make([]string, 2000)
	vecs := make([][]float32, len(ids))
	for i := range vecs {
		ids[i] = fmt.Sprintf("w%05d", i)
		vecs[i] = make([]float32, 256)
		for range 3 {
			vecs[i][rng.IntN(256)] += float32(rng.NormFloat64())
		}
	}
	opts := embedOptions{index: t.TempDir(), ann: flat.ANNAuto, annThreshold: 1000, quiet: true}
	term, _, errb := testTerminal()
	path, err := writeIndex(t.Context(), opts, tableEntities, "m", ids, vecs, term)
	if err != nil {
		t.Fatal(err)
	}
	x, err := flat.Open(t.Context(), path, flat.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if x.Info().ANN != "" {
		t.Errorf("Info().ANN = %q; want exact", x.Info().ANN)
	}
	for _, want := range []string{"reached only recall@10 0.9", "even at efSearch 1024, below 0.98", path + " holds no graph", "searches it exactly", "--ann on"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("stderr = %q; want %q", errb.String(), want)
		}
	}
}

func TestEmbedANNFlags(t *testing.T) {
	opts := embedOptions{input: "out", batchSize: 1, concurrency: 1, annThreshold: -1, llm: llmOptions{url: "http://x/v1", embedModel: "m"}}
	if err := opts.validate(); err == nil || !strings.Contains(err.Error(), "--ann-threshold") {
		t.Errorf("validate(--ann-threshold -1) = %v; want a usage error naming the flag", err)
	}
	if _, err := flat.ParseANNMode("sometimes"); err == nil {
		t.Error(`ParseANNMode("sometimes") = nil error; want a refusal`)
	}
}
