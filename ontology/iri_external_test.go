package ontology_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/test"
	"github.com/kgrag/kgrag/ontology"
	"github.com/kgrag/kgrag/rdf"
)

type typedSubjects map[string]bool

func (s typedSubjects) WriteTriple(t rdf.Triple) error {
	if t.P.Value == rdf.RDFType && t.O.Value == ontology.Entity {
		s[t.S.Value] = true
	}
	return nil
}

// TestEntityIRIIsTheMappers: EntityIRI, which kgrag serve shows and cites,
// is the IRI the mapping gives each entity, on the four samples (ids with
// and without characters that need escaping included).
func TestEntityIRIIsTheMappers(t *testing.T) {
	const base = "http://example.org/kg/"
	for _, sample := range test.Samples() {
		ds, err := graphrag.Open(context.Background(), filepath.Join(test.GraphRAGSamples(t), sample))
		if err != nil {
			t.Fatal(err)
		}
		ds.Entities = append(ds.Entities, graphrag.Entity{ID: "id with/slash #and space", Title: "ODD", Description: "x"})
		got := typedSubjects{}
		if _, err := (ontology.Mapper{Base: base}).Map(context.Background(), ds, got); err != nil {
			t.Fatal(err)
		}
		if len(got) < len(ds.Entities)/2 {
			t.Errorf("%s: the mapping wrote %d entities for %d", sample, len(got), len(ds.Entities))
		}
		for _, e := range ds.Entities {
			if !got[ontology.EntityIRI(base, e.ID)] {
				t.Errorf("%s: entity %q: EntityIRI %s is not an entity the mapping wrote", sample, e.ID, ontology.EntityIRI(base, e.ID))
			}
		}
	}
}
