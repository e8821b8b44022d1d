package graphrag_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/kgrag/kgrag/graphrag"
)

// writeParquet writes rows to path with parquet-go, creating the directory.
// The row structs below mirror the column names of old GraphRAG releases.
func writeParquet[T any](t *testing.T, path string, rows []T) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := parquet.NewGenericWriter[T](f)
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

type finding struct {
	Explanation string `parquet:"explanation"`
	Summary     string `parquet:"summary"`
}

// Releases <= 0.4: entities with name, string community ids, membership in
// create_final_nodes, relationships with rank and string human_readable_id.
type (
	entity03 struct {
		ID                   string    `parquet:"id"`
		Name                 string    `parquet:"name"`
		Type                 string    `parquet:"type"`
		Description          string    `parquet:"description"`
		HumanReadableID      int64     `parquet:"human_readable_id"`
		TextUnitIDs          []string  `parquet:"text_unit_ids,list"`
		DescriptionEmbedding []float64 `parquet:"description_embedding,list"`
	}
	entity04 struct {
		ID              string   `parquet:"id"`
		Name            string   `parquet:"name"`
		Type            string   `parquet:"type"`
		Description     string   `parquet:"description"`
		HumanReadableID int64    `parquet:"human_readable_id"`
		TextUnitIDs     []string `parquet:"text_unit_ids,list"`
	}
	relationship04 struct {
		Source          string   `parquet:"source"`
		Target          string   `parquet:"target"`
		Weight          float64  `parquet:"weight"`
		Description     string   `parquet:"description"`
		TextUnitIDs     []string `parquet:"text_unit_ids,list"`
		ID              string   `parquet:"id"`
		HumanReadableID string   `parquet:"human_readable_id"`
		Rank            int64    `parquet:"rank"`
	}
	community04 struct {
		ID           string `parquet:"id"`
		Title        string `parquet:"title"`
		Level        int64  `parquet:"level"`
		RawCommunity string `parquet:"raw_community"`
	}
	report04 struct {
		Community       string    `parquet:"community"`
		FullContent     string    `parquet:"full_content"`
		Level           int64     `parquet:"level"`
		Rank            float64   `parquet:"rank"`
		Title           string    `parquet:"title"`
		RankExplanation string    `parquet:"rank_explanation"`
		Summary         string    `parquet:"summary"`
		Findings        []finding `parquet:"findings,list"`
		ID              string    `parquet:"id"`
	}
	node04 struct {
		Level     int64   `parquet:"level"`
		Title     string  `parquet:"title"`
		Community *string `parquet:"community,optional"`
		ID        string  `parquet:"id"`
	}
	textUnit04 struct {
		ID          string   `parquet:"id"`
		Text        string   `parquet:"text"`
		NTokens     int64    `parquet:"n_tokens"`
		DocumentIDs []string `parquet:"document_ids,list"`
	}
	document04 struct {
		ID          string   `parquet:"id"`
		TextUnitIDs []string `parquet:"text_unit_ids,list"`
		RawContent  string   `parquet:"raw_content"`
		Title       string   `parquet:"title"`
		Index       int64    `parquet:"__index_level_0__"`
	}
)

func ptr[T any](v T) *T { return &v }

// embeddings says what an old entities table holds of description
// embeddings.
type embeddings int

const (
	noVectors    embeddings = iota // no column (0.4)
	vectors                        // a vector per entity (0.2, 0.3)
	emptyVectors                   // the column, all null (0.4 as found: vectors in LanceDB)
)

// entity04Null is entity04 with 0.4's empty embedding columns.
type entity04Null struct {
	entity04
	DescriptionEmbedding []float64 `parquet:"description_embedding,list,optional"`
	GraphEmbedding       []float64 `parquet:"graph_embedding,list,optional"`
}

// writeOld writes a tiny dataset with the columns of releases <= 0.4 into
// dir; emb says whether it looks like 0.2/0.3 or 0.4.
func writeOld(t *testing.T, dir string, emb embeddings) {
	ents := []entity04{
		{ID: "e1", Name: "ALICE", Type: "PERSON", HumanReadableID: 0, TextUnitIDs: []string{"t1"}},
		{ID: "e2", Name: "BOB", Type: "PERSON", HumanReadableID: 1, TextUnitIDs: []string{"t1", "t2"}},
		{ID: "e3", Name: "CAROL", Type: "PERSON", HumanReadableID: 2, TextUnitIDs: []string{"t2"}},
	}
	switch emb {
	case vectors:
		var with []entity03
		for _, e := range ents {
			with = append(with, entity03{e.ID, e.Name, e.Type, e.Description, e.HumanReadableID, e.TextUnitIDs, []float64{0.5, -0.25}})
		}
		writeParquet(t, filepath.Join(dir, "create_final_entities.parquet"), with)
	case emptyVectors:
		var with []entity04Null
		for _, e := range ents {
			with = append(with, entity04Null{entity04: e})
		}
		writeParquet(t, filepath.Join(dir, "create_final_entities.parquet"), with)
	default:
		writeParquet(t, filepath.Join(dir, "create_final_entities.parquet"), ents)
	}
	writeParquet(t, filepath.Join(dir, "create_final_relationships.parquet"), []relationship04{
		{Source: "ALICE", Target: "BOB", Weight: 2, ID: "r1", HumanReadableID: "0", Rank: 3, TextUnitIDs: []string{"t1"}},
		{Source: "BOB", Target: "CAROL", Weight: 1, ID: "r2", HumanReadableID: "1", Rank: 3},
	})
	writeParquet(t, filepath.Join(dir, "create_final_communities.parquet"), []community04{
		{ID: "0", Title: "Community 0", Level: 0},
		{ID: "1", Title: "Community 1", Level: 1},
		{ID: "2", Title: "Community 2", Level: 1},
	})
	writeParquet(t, filepath.Join(dir, "create_final_community_reports.parquet"), []report04{
		{Community: "0", Level: 0, Rank: 7.5, Title: "All", RankExplanation: "why", ID: "rep0",
			Findings: []finding{{Summary: "s", Explanation: "e"}}},
		{Community: "2", Level: 1, Rank: 3, Title: "Carol", ID: "rep2"},
		{Community: "9", Level: 2, Rank: 1, Title: "Orphan report", ID: "rep9"},
	})
	writeParquet(t, filepath.Join(dir, "create_final_nodes.parquet"), []node04{
		{Level: 0, Title: "ALICE", Community: ptr("0"), ID: "e1"},
		{Level: 0, Title: "BOB", Community: ptr("0"), ID: "e2"},
		{Level: 0, Title: "CAROL", Community: ptr("0"), ID: "e3"},
		{Level: 1, Title: "ALICE", Community: ptr("1"), ID: "e1"},
		{Level: 1, Title: "BOB", Community: ptr("1"), ID: "e2"},
		{Level: 1, Title: "CAROL", Community: ptr("2"), ID: "e3"},
		{Level: 2, Title: "CAROL", Community: nil, ID: "e3"},
	})
	writeParquet(t, filepath.Join(dir, "create_final_text_units.parquet"), []textUnit04{
		{ID: "t1", Text: "Alice met Bob.", NTokens: 4, DocumentIDs: []string{"d1"}},
		{ID: "t2", Text: "Bob met Carol.", NTokens: 4, DocumentIDs: []string{"d1"}},
	})
	writeParquet(t, filepath.Join(dir, "create_final_documents.parquet"), []document04{
		{ID: "d1", TextUnitIDs: []string{"t1", "t2"}, RawContent: "Alice met Bob. Bob met Carol.", Title: "a.txt"},
	})
}

func TestOpenOldLayouts(t *testing.T) {
	root := t.TempDir()
	// output/<timestamp>/artifacts (0.2-0.4); the newest run must win,
	// and the release is the data's whichever folder is given.
	writeOld(t, filepath.Join(root, "p02", "output", "20240101-000000", "artifacts"), vectors)
	writeOld(t, filepath.Join(root, "p02", "output", "20240812-142512", "artifacts"), vectors)
	writeOld(t, filepath.Join(root, "p03"), vectors)
	writeOld(t, filepath.Join(root, "p04"), noVectors)
	writeOld(t, filepath.Join(root, "p04null", "output", "20241001-120000", "artifacts"), emptyVectors)
	newest := filepath.Join(root, "p02", "output", "20240812-142512", "artifacts")
	newest04 := filepath.Join(root, "p04null", "output", "20241001-120000", "artifacts")
	tests := []struct {
		dir     string
		release graphrag.Release
		tables  string
	}{
		{filepath.Join(root, "p02"), graphrag.Release03, newest},
		{filepath.Join(root, "p02", "output"), graphrag.Release03, newest},
		{filepath.Join(root, "p02", "output", "20240812-142512"), graphrag.Release03, newest},
		{newest, graphrag.Release03, newest},
		{filepath.Join(root, "p03"), graphrag.Release03, filepath.Join(root, "p03")},
		{filepath.Join(root, "p04"), graphrag.Release04, filepath.Join(root, "p04")},
		{filepath.Join(root, "p04null"), graphrag.Release04, newest04},
		{filepath.Join(root, "p04null", "output", "20241001-120000"), graphrag.Release04, newest04},
		{newest04, graphrag.Release04, newest04},
	}
	for _, tt := range tests {
		t.Run(strings.TrimPrefix(tt.dir, root), func(t *testing.T) {
			ds, err := graphrag.Open(context.Background(), tt.dir)
			if err != nil {
				t.Fatal(err)
			}
			if ds.Release != tt.release {
				t.Errorf("Release = %q; want %q", ds.Release, tt.release)
			}
			if ds.Dir != tt.tables {
				t.Errorf("Dir = %q; want %q", ds.Dir, tt.tables)
			}
			if got, want := ds.Absent, []string{"covariates"}; !slices.Equal(got, want) {
				t.Errorf("Absent = %v; want %v", got, want)
			}
			if !strings.Contains(tt.dir, "2024") && strings.Contains(tt.tables, "2024") && !strings.Contains(strings.Join(ds.Notes, "\n"), "read run") {
				t.Errorf("Notes = %q; want the chosen run named", ds.Notes)
			}
			if strings.Contains(tt.dir, "p04null") && !strings.Contains(strings.Join(ds.Notes, "\n"), "holds no vector") {
				t.Errorf("Notes = %q; want the empty embedding column explained", ds.Notes)
			}
			checkOld(t, ds, tt.release != graphrag.Release04)
		})
	}
}

func checkOld(t *testing.T, ds *graphrag.Dataset, embeddings bool) {
	t.Helper()
	if got, want := len(ds.Entities), 3; got != want {
		t.Fatalf("entities = %d; want %d", got, want)
	}
	if e := ds.Entities[1]; e.Title != "BOB" || e.HumanReadableID != "1" || (len(e.DescriptionEmbedding) == 2) != embeddings {
		t.Errorf("entity 1 = %+v; want BOB, human_readable_id 1, embedding %v", e, embeddings)
	}
	r := ds.Relationships[0]
	if r.SourceID != "e1" || r.TargetID != "e2" || r.Rank != 3 || !r.HasRank || r.HumanReadableID != "0" {
		t.Errorf("relationship 0 = %+v; want e1->e2 rank 3 human_readable_id 0", r)
	}
	type comm struct {
		community, parent string
		level             int64
		children, members string
		report            string
		weight            float64
	}
	var got []comm
	for _, c := range ds.Communities {
		rep := ""
		if c.Report != nil {
			rep = c.Report.ID
		}
		got = append(got, comm{c.Community, c.Parent, c.Level, strings.Join(c.Children, ","), strings.Join(c.EntityIDs, ","), rep, c.Weight})
	}
	// Community 0 holds all three entities (2 text units) and is the
	// heaviest; community 1 (ALICE, BOB) covers t1, t2; community 2 (CAROL)
	// only t2. Report 9 has no community row and still makes a community.
	want := []comm{
		{"0", "", 0, "1,2", "e1,e2,e3", "rep0", 1},
		{"1", "0", 1, "", "e1,e2", "", 1},
		{"2", "0", 1, "", "e3", "rep2", 0.5},
		{"9", "", 2, "", "", "rep9", 0},
	}
	if !slices.Equal(got, want) {
		t.Errorf("communities = %v; want %v", got, want)
	}
	if f := ds.Communities[0].Report.Findings; len(f) != 1 || f[0].Summary != "s" || f[0].Explanation != "e" {
		t.Errorf("findings = %v; want [{s e}]", f)
	}
	if ex := ds.Communities[0].Report.RankExplanation; ex != "why" {
		t.Errorf("RankExplanation = %q; want %q", ex, "why")
	}
	// Text units lack entity_ids here: derived from the entities.
	if got, want := ds.TextUnits[1].EntityIDs, []string{"e2", "e3"}; !slices.Equal(got, want) {
		t.Errorf("text unit t2 entities = %v; want %v", got, want)
	}
	if d := ds.Documents[0]; d.Text == "" || d.Title != "a.txt" {
		t.Errorf("document = %+v; want raw_content as Text", d)
	}
}

// Releases 0.5-0.9: create_final_* with title, integer community with
// entity_ids, no parent; documents with attributes.
type (
	entity05 struct {
		ID              string   `parquet:"id"`
		HumanReadableID int64    `parquet:"human_readable_id"`
		Title           string   `parquet:"title"`
		Type            string   `parquet:"type"`
		Description     string   `parquet:"description"`
		TextUnitIDs     []string `parquet:"text_unit_ids,list"`
	}
	relationship05 struct {
		ID              string   `parquet:"id"`
		HumanReadableID int64    `parquet:"human_readable_id"`
		Source          string   `parquet:"source"`
		Target          string   `parquet:"target"`
		Description     string   `parquet:"description"`
		Weight          float64  `parquet:"weight"`
		CombinedDegree  int64    `parquet:"combined_degree"`
		TextUnitIDs     []string `parquet:"text_unit_ids,list"`
	}
	community05 struct {
		ID              string   `parquet:"id"`
		HumanReadableID int64    `parquet:"human_readable_id"`
		Community       int64    `parquet:"community"`
		Level           int64    `parquet:"level"`
		Title           string   `parquet:"title"`
		EntityIDs       []string `parquet:"entity_ids,list"`
		Period          string   `parquet:"period"`
		Size            int64    `parquet:"size"`
	}
	report05 struct {
		ID              string    `parquet:"id"`
		HumanReadableID int64     `parquet:"human_readable_id"`
		Community       int64     `parquet:"community"`
		Level           int64     `parquet:"level"`
		Title           string    `parquet:"title"`
		Summary         string    `parquet:"summary"`
		Rank            float64   `parquet:"rank"`
		RankExplanation string    `parquet:"rank_explanation"`
		Findings        []finding `parquet:"findings,list"`
	}
	textUnit05 struct {
		ID              string   `parquet:"id"`
		HumanReadableID int64    `parquet:"human_readable_id"`
		Text            string   `parquet:"text"`
		NTokens         int64    `parquet:"n_tokens"`
		DocumentIDs     []string `parquet:"document_ids,list"`
		EntityIDs       []string `parquet:"entity_ids,list"`
	}
	document05 struct {
		ID          string            `parquet:"id"`
		Title       string            `parquet:"title"`
		Text        string            `parquet:"text"`
		TextUnitIDs []string          `parquet:"text_unit_ids,list"`
		Attributes  map[string]string `parquet:"attributes"`
	}
)

func TestOpenRelease05(t *testing.T) {
	dir := t.TempDir()
	writeParquet(t, filepath.Join(dir, "create_final_entities.parquet"), []entity05{
		{ID: "e1", HumanReadableID: 0, Title: "ALICE", TextUnitIDs: []string{"t1"}},
		{ID: "e2", HumanReadableID: 1, Title: "BOB", TextUnitIDs: []string{"t1"}},
	})
	writeParquet(t, filepath.Join(dir, "create_final_relationships.parquet"), []relationship05{
		{ID: "r1", HumanReadableID: 0, Source: "ALICE", Target: "BOB", Weight: 1, CombinedDegree: 2},
		{ID: "r2", HumanReadableID: 1, Source: "ALICE", Target: "DAVE", Weight: 1, CombinedDegree: 1},
	})
	writeParquet(t, filepath.Join(dir, "create_final_communities.parquet"), []community05{
		{ID: "uuid-0", HumanReadableID: 0, Community: 0, Level: 0, EntityIDs: []string{"e1", "e2"}, Size: 2},
	})
	writeParquet(t, filepath.Join(dir, "create_final_community_reports.parquet"), []report05{
		{ID: "rep0", Community: 0, Rank: 5, RankExplanation: "fine", Findings: []finding{}},
	})
	writeParquet(t, filepath.Join(dir, "create_final_text_units.parquet"), []textUnit05{
		{ID: "t1", Text: "Alice and Bob.", NTokens: 3, DocumentIDs: []string{"d1"}, EntityIDs: []string{"e2"}},
	})
	writeParquet(t, filepath.Join(dir, "create_final_documents.parquet"), []document05{
		{ID: "d1", Title: "a.txt", Text: "Alice and Bob.", TextUnitIDs: []string{"t1"}, Attributes: map[string]string{"lang": "en"}},
	})
	ds, err := graphrag.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if ds.Release != graphrag.Release05 {
		t.Errorf("Release = %q; want %q", ds.Release, graphrag.Release05)
	}
	c := ds.Communities[0]
	if c.ID != "uuid-0" || c.Community != "0" || !slices.Equal(c.EntityIDs, []string{"e1", "e2"}) || c.Report == nil || c.Report.RankExplanation != "fine" || c.Weight != 1 {
		t.Errorf("community = %+v; want uuid-0, community 0, members e1,e2, report with rank_explanation, weight 1", c)
	}
	if c.Report != nil && c.Report.Findings != nil {
		t.Errorf("findings = %#v; want nil for an empty list", c.Report.Findings)
	}
	// entity_ids present in text units: kept as written, not derived.
	if got, want := ds.TextUnits[0].EntityIDs, []string{"e2"}; !slices.Equal(got, want) {
		t.Errorf("text unit entities = %v; want %v", got, want)
	}
	if got, want := ds.Documents[0].Metadata, `{"lang":"en"}`; got != want {
		t.Errorf("document metadata = %q; want %q", got, want)
	}
	// DAVE is no entity: one placeholder, one relationship affected.
	if ds.Placeholders != 1 || ds.PlaceholderRelationships != 1 {
		t.Errorf("placeholders = %d, %d relationships; want 1, 1", ds.Placeholders, ds.PlaceholderRelationships)
	}
	last := ds.Entities[len(ds.Entities)-1]
	want := graphrag.Entity{ID: "title:DAVE", Title: "DAVE", Placeholder: true}
	if !entityEqual(last, want) || ds.Relationships[1].TargetID != "title:DAVE" {
		t.Errorf("last entity = %+v, r2 target %q; want %+v, title:DAVE", last, ds.Relationships[1].TargetID, want)
	}
}

func entityEqual(a, b graphrag.Entity) bool {
	return a.ID == b.ID && a.Title == b.Title && a.Placeholder == b.Placeholder && a.Type == b.Type &&
		a.Description == b.Description && len(a.TextUnitIDs) == 0 && len(b.TextUnitIDs) == 0
}

// TestOpenFromSettings: a project folder whose GraphRAG settings put the
// output elsewhere than output/ is read from there (output.base_dir, or
// storage.base_dir before 1.0, with ${timestamp} runs), and a settings
// file that does not parse is an error naming it.
func TestOpenFromSettings(t *testing.T) {
	root := t.TempDir()
	link := func(dst string) {
		t.Helper()
		if err := os.MkdirAll(dst, 0o755); err != nil {
			t.Fatal(err)
		}
		src := sample(t, "v3")
		files, _ := os.ReadDir(src)
		for _, f := range files {
			if err := os.Symlink(filepath.Join(src, f.Name()), filepath.Join(dst, f.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	write := func(p, s string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	yamlProject := filepath.Join(root, "yaml")
	link(filepath.Join(yamlProject, "output", "artifacts"))
	write(filepath.Join(yamlProject, "settings.yaml"), "models: {}\noutput:\n  type: file\n  base_dir: \"output/artifacts\"\n")

	jsonProject := filepath.Join(root, "json")
	writeOld(t, filepath.Join(jsonProject, "runs", "20240101-000000", "artifacts"), vectors)
	writeOld(t, filepath.Join(jsonProject, "runs", "20240301-000000", "artifacts"), vectors)
	write(filepath.Join(jsonProject, "settings.json"), `{"storage": {"type": "file", "base_dir": "runs/${timestamp}/artifacts"}}`)

	tests := []struct {
		dir, tables, note string
	}{
		{yamlProject, filepath.Join(yamlProject, "output", "artifacts"), "settings.yaml"},
		{jsonProject, filepath.Join(jsonProject, "runs", "20240301-000000", "artifacts"), "settings.json"},
	}
	for _, tt := range tests {
		ds, err := graphrag.Open(context.Background(), tt.dir)
		if err != nil {
			t.Fatalf("Open(%s): %v", tt.dir, err)
		}
		if ds.Dir != tt.tables || !strings.Contains(strings.Join(ds.Notes, "\n"), tt.note) {
			t.Errorf("Open(%s): Dir %s, notes %q; want %s and a note naming %s", tt.dir, ds.Dir, ds.Notes, tt.tables, tt.note)
		}
	}

	bad := filepath.Join(root, "bad")
	link(filepath.Join(bad, "output", "artifacts"))
	write(filepath.Join(bad, "settings.yaml"), "output: [unclosed\n")
	if _, err := graphrag.Open(context.Background(), bad); err == nil || !strings.Contains(err.Error(), filepath.Join(bad, "settings.yaml")) {
		t.Errorf("Open with a broken settings.yaml: %v; want an error naming it", err)
	}
}
