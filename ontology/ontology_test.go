package ontology_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/test"
	"github.com/kgrag/kgrag/ontology"
	"github.com/kgrag/kgrag/rdf"
)

type collector []rdf.Triple

func (c *collector) WriteTriple(t rdf.Triple) error { *c = append(*c, t); return nil }

const (
	rdfsLabel   = rdf.RDFSNS + "label"
	rdfsComment = rdf.RDFSNS + "comment"
	rdfsDomain  = rdf.RDFSNS + "domain"
	rdfsRange   = rdf.RDFSNS + "range"
)

// TestEveryTermDeclared maps the four samples and checks that every class
// and property kgrag writes is declared in gr.ttl with a label and a
// comment, and every property with a domain and a range.
func TestEveryTermDeclared(t *testing.T) {
	var onto collector
	if err := ontology.Triples(&onto); err != nil {
		t.Fatal(err)
	}
	declared := map[string]map[string]bool{}
	for _, tr := range onto {
		if declared[tr.S.Value] == nil {
			declared[tr.S.Value] = map[string]bool{}
		}
		declared[tr.S.Value][tr.P.Value] = true
	}
	if len(onto) < 500 {
		t.Fatalf("ontology has %d triples; want the whole of gr.ttl", len(onto))
	}

	const base = "http://kgrag.test/"
	classes, props := map[string]bool{}, map[string]bool{}
	samples := test.GraphRAGSamples(t)
	for _, v := range test.Samples() {
		ds, err := graphrag.Open(context.Background(), filepath.Join(samples, v))
		if err != nil {
			t.Fatal(err)
		}
		var out collector
		if _, err := (ontology.Mapper{Base: base}).Map(context.Background(), ds, &out); err != nil {
			t.Fatal(err)
		}
		if v == "v3" {
			// As kgrag index leaves it: with a run record.
			run := &graphrag.Run{Tool: "kgrag", Version: "v0.0.0-test", Started: time.Unix(1e9, 0), Ended: time.Unix(1e9+60, 0),
				ChatModel: "m", EmbeddingModel: "e", Prompts: map[string]string{"index_extract": strings.Repeat("ab", 32)}}
			if _, err := (ontology.Mapper{Base: base, Run: run}).Map(context.Background(), ds, &out); err != nil {
				t.Fatal(err)
			}
		}
		for _, tr := range out {
			switch {
			case tr.P.Value == rdf.RDFType:
				classes[tr.O.Value] = true
			case strings.HasPrefix(tr.P.Value, base+"relationship/"):
				// the RDF article's direct edge: an instance used as predicate
			default:
				props[tr.P.Value] = true
			}
		}
	}
	for c := range classes {
		for _, p := range []string{rdfsLabel, rdfsComment} {
			if !declared[c][p] {
				t.Errorf("class %s has no %s in gr.ttl", c, p)
			}
		}
	}
	for p := range props {
		if p == rdfsLabel {
			continue
		}
		if !strings.HasPrefix(p, ontology.NS) && !strings.HasPrefix(p, ontology.ProvNS) {
			t.Errorf("property %s is outside the gr: and prov: namespaces", p)
			continue
		}
		for _, want := range []string{rdfsLabel, rdfsComment, rdfsDomain, rdfsRange} {
			if !declared[p][want] {
				t.Errorf("property %s has no %s in gr.ttl", p, want)
			}
		}
	}
	if len(classes) != 9 {
		t.Errorf("samples use %d classes; want 9 (Document, Chunk, Entity, related_to, Community, Finding, Covariate, IndexRun, Prompt)", len(classes))
	}
}
