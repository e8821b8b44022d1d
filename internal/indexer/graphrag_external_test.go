package indexer_test

import (
	"encoding/json"
	"os/exec"
	"testing"

	"github.com/kgrag/kgrag/internal/indexer"
	"github.com/kgrag/kgrag/internal/indexer/indexertest"
	"github.com/kgrag/kgrag/internal/test"
)

// graphragRead reads an output folder with pandas and PyPI graphrag's
// query-side table readers (what its local and global search load) and
// prints how many rows each made, and how many text units list entities.
const graphragRead = `
import json, logging, os, sys
logging.disable(logging.WARNING)
import pandas as pd
from graphrag.query import indexer_adapters as ia
d = sys.argv[1]
t = lambda n: pd.read_parquet(os.path.join(d, n + ".parquet"))
comms, reps = t("communities"), t("community_reports")
units = ia.read_indexer_text_units(t("text_units"))
# Without claims there is no covariates table, as in GraphRAG's output.
has_covs = os.path.exists(os.path.join(d, "covariates.parquet"))
covs = ia.read_indexer_covariates(t("covariates")) if has_covs else []
cov_units = set(t("covariates")["text_unit_id"]) if has_covs else set()
# kgrag writes a null list where GraphRAG writes [] (graphrag.Write3x).
listed = {c for ids in t("text_units")["covariate_ids"] if ids is not None for c in ids}
print(json.dumps({
    "documents": len(t("documents")),
    "text_units": len(units),
    "units_with_entities": sum(1 for u in units if u.entity_ids),
    "entities": len(ia.read_indexer_entities(t("entities"), comms, None)),
    "relationships": len(ia.read_indexer_relationships(t("relationships"))),
    "communities": len(ia.read_indexer_communities(comms, reps)),
    "community_rows": len(comms),
    "entities_in_communities": sum(1 for e in ia.read_indexer_entities(t("entities"), comms, None) if e.community_ids),
    "reports": len(ia.read_indexer_reports(reps, comms, None)),
    "noun_phrases": sum(1 for e in ia.read_indexer_entities(t("entities"), comms, None) if e.type == "NOUN PHRASE"),
    "covariates": len(covs),
    "claims_of_scrooge": sum(1 for c in covs if c.subject_id == "SCROOGE"),
    "covariates_listed_by_units": len(listed & {c.id for c in covs}),
    "covariate_units_known": len(cov_units & {u.id for u in units}),
}))
`

// TestGraphRAGReads checks that PyPI graphrag's own readers accept the
// output and find in it the rows kgrag wrote, claims included.
func TestGraphRAGReads(t *testing.T) {
	py := test.GraphRAGPython(t)
	_, client := indexertest.Model(t)
	opts := carolOptions(t, 3000)
	opts.Extraction.Claims.Enabled = true
	sum, err := indexer.Run(t.Context(), client, opts)
	if err != nil {
		t.Fatal(err)
	}
	got := readWithGraphRAG(t, py, opts.Output)
	want := map[string]int{
		"documents": sum.Documents, "text_units": sum.TextUnits, "entities": sum.Entities,
		"relationships": sum.Relationships, "communities": sum.Communities, "reports": sum.Reports,
		"covariates": sum.Covariates, "covariates_listed_by_units": sum.Covariates,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("graphrag read %d %s; kgrag wrote %d", got[k], k, v)
		}
	}
	// The script claims something of Scrooge in every unit naming him.
	if got["claims_of_scrooge"] == 0 || got["covariate_units_known"] == 0 {
		t.Errorf("graphrag finds %d claims about SCROOGE, in %d known text units", got["claims_of_scrooge"], got["covariate_units_known"])
	}
	if got["units_with_entities"] == 0 {
		t.Error("graphrag finds no text unit with entity ids")
	}
	t.Logf("graphrag read %v", got)
}

// readWithGraphRAG runs graphragRead on the output folder dir.
func readWithGraphRAG(t *testing.T, py, dir string) map[string]int {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), py, "-c", graphragRead, dir).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("graphrag readers: %v\n%s", err, ee.Stderr)
		}
		t.Fatal(err)
	}
	var got map[string]int
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return got
}
