package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kgrag/kgrag/internal/embedtext"
	"github.com/kgrag/kgrag/internal/serve"
	"github.com/kgrag/kgrag/internal/test"
	"github.com/kgrag/kgrag/ontology"
)

// TestProvenanceFromCitation follows an answer's citation to the files
// it came from: the v3 sample is loaded into Oxigraph and served from
// there; the model cites entities of the context; from each cited
// entity's IRI one SPARQL query reaches the documents, with their paths
// and hashes. They must be the documents scripts/oracle/provenance.py
// finds with pyarrow (entity -> text units -> documents, SHA-256 of the
// text), and the entity must name the index run that made it.
func TestProvenanceFromCitation(t *testing.T) {
	f := newAskFixture(t)
	st := loadOxigraph(t, f)
	sf := startServe(t, f, func(o *serveOptions) { o.ask.input, o.ask.store = "", st })

	out, err := exec.Command("python3", filepath.Join(test.RepoRoot(t), "scripts", "oracle", "provenance.py"), f.input).Output()
	if err != nil {
		test.SkipOrFail(t, "python3 with pyarrow is needed for the oracle: %v", err)
	}
	var want map[string][][2]string
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}

	e := f.entity(t, "EBENEZER SCROOGE")
	q := embedtext.Entity(e)
	opts := f.options(q)
	ctx := askContext(t, opts).Context
	if len(ctx.Records.Entities) < 2 {
		t.Fatalf("context holds %d entities; want several", len(ctx.Records.Entities))
	}
	cited := ctx.Records.Entities[:2]
	f.srv.Reply("", fmt.Sprintf("Scrooge [Data: Entities (%s, %s)].", cited[0].ID, cited[1].ID))
	var reply struct {
		KGRAG struct {
			Citations []serve.Citation `json:"citations"`
		} `json:"kgrag"`
	}
	sf.post(t, "/v1/chat/completions", "", map[string]any{"model": "kgrag-local", "messages": []map[string]string{{"role": "user", "content": q}}}, &reply)
	if len(reply.KGRAG.Citations) != 2 {
		t.Fatalf("citations %+v; want the two entities", reply.KGRAG.Citations)
	}
	c, _, err := storeClient(st)
	if err != nil {
		t.Fatal(err)
	}
	for _, cit := range reply.KGRAG.Citations {
		if cit.IRI == "" {
			t.Fatalf("citation %+v has no IRI", cit)
		}
		res, err := c.Select(t.Context(), fmt.Sprintf(`PREFIX gr: <%s>
PREFIX prov: <%s>
SELECT DISTINCT ?path ?sha ?release WHERE { GRAPH <%s> {
  <%s> prov:wasDerivedFrom ?doc ; prov:wasGeneratedBy ?run .
  ?doc a gr:Document ; gr:source_path ?path ; gr:sha256 ?sha .
  ?run a gr:IndexRun ; prov:used ?doc ; gr:graphrag_release ?release .
} } ORDER BY ?path ?sha`, ontology.NS, ontology.ProvNS, st.graph, cit.IRI))
		if err != nil {
			t.Fatal(err)
		}
		var got [][2]string
		for _, b := range res.Bindings {
			got = append(got, [2]string{b["path"].Value, b["sha"].Value})
			if b["release"].Value != "3.x" {
				t.Errorf("%s: run release %q; want 3.x", cit.IRI, b["release"].Value)
			}
		}
		w := want[cit.RecordID]
		if len(w) == 0 || !slices.Equal(got, w) {
			t.Errorf("entity %s (%s): documents %q; want %q (pyarrow)", cit.RecordID, cit.IRI, got, w)
		}
	}
}
