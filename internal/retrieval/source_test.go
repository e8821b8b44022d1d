package retrieval_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/retrieval"
)

// TestEntityByNumber finds entities by the number an answer cites, where
// the row is the number (GraphRAG's 0-based ids), one past it (1-based)
// and neither (rows out of order, as a merged update table has them).
func TestEntityByNumber(t *testing.T) {
	ds := &graphrag.Dataset{Release: graphrag.Release3, Entities: []graphrag.Entity{
		{ID: "a", HumanReadableID: "5", Title: "A"},
		{ID: "b", HumanReadableID: "0", Title: "B"},
		{ID: "c", HumanReadableID: "1", Title: "C"},
		{ID: "d", HumanReadableID: "4", Title: "D"},
		{ID: "e", HumanReadableID: "", Title: "E"},
	}}
	src := retrieval.NewMemorySource(ds)
	tests := []struct {
		n    int64
		want string // "" for none
	}{
		{0, "b"}, // row 0 is A's: read on to row 1
		{1, "c"},
		{4, "d"}, // row 3, one before the number
		{5, "a"}, // beyond the rows: read from the start
		{2, ""},
		{-1, ""},
		{99, ""},
	}
	for _, tt := range tests {
		ref, ok, err := src.EntityByNumber(context.Background(), tt.n)
		if err != nil {
			t.Fatalf("%d: %v", tt.n, err)
		}
		if ok != (tt.want != "") || ref.ID != tt.want {
			t.Errorf("entity numbered %d: %+v, %v; want %q", tt.n, ref, ok, tt.want)
		}
	}

	// Every entity of the v3 sample by its own number, as the parquet
	// file has it (the placeholders made for dangling references have
	// none).
	v3, _ := openV3(t)
	src = retrieval.NewMemorySource(v3)
	for _, e := range v3.Entities {
		if e.HumanReadableID == "" {
			continue
		}
		n, err := strconv.ParseInt(e.HumanReadableID, 10, 64)
		if err != nil {
			t.Fatalf("%s: human_readable_id %q", e.ID, e.HumanReadableID)
		}
		ref, ok, err := src.EntityByNumber(context.Background(), n)
		if err != nil || !ok || ref.ID != e.ID || ref.Title != e.Title {
			t.Errorf("entity numbered %d: %+v, %v, %v; want %s (%s)", n, ref, ok, err, e.ID, e.Title)
		}
	}
}
