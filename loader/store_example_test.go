package loader_test

import (
	"context"
	"fmt"

	"github.com/kgrag/kgrag/loader"
	"github.com/kgrag/kgrag/loader/memstore"
	"github.com/kgrag/kgrag/rdf"
)

func ExampleProfileFor() {
	p, err := loader.ProfileFor("fuseki", "http://localhost:3030/ds")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.QueryURL)
	fmt.Println(p.UpdateURL)
	fmt.Println(p.GraphStoreURL)
	// Output:
	// http://localhost:3030/ds/query
	// http://localhost:3030/ds/update
	// http://localhost:3030/ds/data
}

// A caller pushes triples into ReplaceGraph; any loader.Store works, here the
// in-memory fake. With a real store:
//
//	p, _ := loader.ProfileFor("oxigraph", "http://127.0.0.1:7878")
//	s, err := loader.Open(p, loader.Options{Counter: progress})
func ExampleStore() {
	var s loader.Store = memstore.New()
	ctx := context.Background()
	const g = "http://example.org/graph/kg"
	n, err := s.ReplaceGraph(ctx, g, func(w rdf.Writer) error {
		for _, name := range []string{"Alice", "Bob", "Alice"} {
			t := rdf.Triple{S: rdf.IRI("http://example.org/e/" + name), P: rdf.IRI(rdf.RDFSNS + "label"), O: rdf.String(name)}
			if err := w.WriteTriple(t); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	count, _ := s.Count(ctx, g)
	fmt.Println(n, "written,", count, "distinct")
	// Output: 3 written, 2 distinct
}
