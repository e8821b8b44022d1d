package embedtext_test

import (
	"slices"
	"testing"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/embedtext"
)

// TestOf: the texts are GraphRAG's (its generate_text_embeddings embeds
// title + ":" + description for entities, the text of text units and the
// full content of reports); placeholders are not embedded, and rows
// without text are counted, not embedded.
func TestOf(t *testing.T) {
	ds := &graphrag.Dataset{
		Entities: []graphrag.Entity{
			{ID: "e1", Title: "SCROOGE", Description: "a miser"},
			{ID: "e2", Title: "MARLEY", Placeholder: true},
			{ID: "e3", Title: "FRED", Description: ""},
		},
		TextUnits: []graphrag.TextUnit{{ID: "t1", Text: "Marley was dead."}, {ID: "t2", Text: " \n"}},
		Communities: []graphrag.Community{
			{Community: "0", Report: &graphrag.CommunityReport{FullContent: "# Scrooge"}},
			{Community: "1"},
		},
	}
	tests := []struct {
		table      string
		ids, texts []string
		empty      int
	}{
		{embedtext.Entities, []string{"e1", "e3"}, []string{"SCROOGE:a miser", "FRED:"}, 0},
		{embedtext.TextUnits, []string{"t1"}, []string{"Marley was dead."}, 1},
		{embedtext.Reports, []string{"0"}, []string{"# Scrooge"}, 0},
	}
	for _, tt := range tests {
		ids, texts, empty := embedtext.Of(ds, tt.table)
		if !slices.Equal(ids, tt.ids) || !slices.Equal(texts, tt.texts) || empty != tt.empty {
			t.Errorf("Of(%s) = %q, %q, %d; want %q, %q, %d", tt.table, ids, texts, empty, tt.ids, tt.texts, tt.empty)
		}
	}
}
