package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/embedindex/flat"
	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
	"github.com/kgrag/kgrag/internal/test"
	"github.com/kgrag/kgrag/ontology"
	"github.com/kgrag/kgrag/rdf"
)

func testTerminal() (terminal, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	return terminal{in: strings.NewReader(""), out: &out, err: &errb}, &out, &errb
}

func TestLoadUsage(t *testing.T) {
	in := filepath.Join(test.GraphRAGSamples(t), "v3")
	tests := []struct {
		name string
		opts loadOptions
		want string // in the message
	}{
		{"no input", loadOptions{turtle: "x.ttl", base: defaultBase}, "--input is required"},
		{"no output", loadOptions{input: in, base: defaultBase}, "say where to write"},
		{"two outputs", loadOptions{input: in, turtle: "a", ntriples: "b", base: defaultBase}, "choose one"},
		{"relative base", loadOptions{input: in, turtle: "a", base: "kg/"}, "not absolute"},
		{"ontology with ntriples", loadOptions{input: in, ntriples: "a", base: defaultBase, withOntology: true}, "--with-ontology"},
		{"store without graph", loadOptions{input: in, base: defaultBase, store: storeOptions{url: "http://localhost:3030/ds", authScheme: "basic", batchSize: 1}}, "--graph"},
		{"unknown store kind", loadOptions{input: in, base: defaultBase, store: storeOptions{url: "http://localhost:9999/x", graph: "http://example.org/g", authScheme: "basic", batchSize: 1}}, "--store-type"},
		{"graph not an IRI", loadOptions{input: in, base: defaultBase, store: storeOptions{url: "http://localhost:3030/ds", graph: "my graph", authScheme: "basic", batchSize: 1}}, "not an absolute IRI"},
		{"token and user", loadOptions{input: in, base: defaultBase, store: storeOptions{url: "http://localhost:3030/ds", graph: "http://example.org/g", token: "t", user: "u", authScheme: "basic", batchSize: 1}}, "either --token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			term, _, _ := testTerminal()
			err := runLoad(context.Background(), tt.opts, term)
			var ue *usageError
			if !errors.As(err, &ue) {
				t.Fatalf("runLoad = %v; want a usage error", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("runLoad error = %q; want it to mention %q", err, tt.want)
			}
		})
	}
}

// TestLoadBadInput checks that bad input names the file and field, and that
// no output file is left behind, nor an existing one changed.
func TestLoadBadInput(t *testing.T) {
	samples := test.GraphRAGSamples(t)
	tests := []struct {
		name  string
		setup func(t *testing.T) string // returns the input dir
		want  []string
	}{
		{"missing directory", func(t *testing.T) string { return filepath.Join(t.TempDir(), "nope") }, []string{"nope"}},
		{"no tables", func(t *testing.T) string {
			d := t.TempDir()
			os.WriteFile(filepath.Join(d, "notes.txt"), []byte("hello"), 0o644)
			return d
		}, []string{"no graphrag tables"}},
		{"truncated parquet", func(t *testing.T) string {
			d := copySample(t, filepath.Join(samples, "v3"))
			p := filepath.Join(d, "entities.parquet")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, b[:len(b)/2], 0o644)
			return d
		}, []string{"entities.parquet"}},
		// The footer reads, so the link pass (which needs nothing of the
		// documents) passes; the documents fail once writing has begun.
		{"corrupt table read while writing", func(t *testing.T) string {
			d := copySample(t, filepath.Join(samples, "v3"))
			p := filepath.Join(d, "documents.parquet")
			b, _ := os.ReadFile(p)
			for i := 16; i < len(b)/2; i++ {
				b[i] = 0xff
			}
			os.WriteFile(p, b, 0o644)
			return d
		}, []string{"documents.parquet"}},
		{"missing required column", func(t *testing.T) string {
			// A relationships table in the place of the entities table
			// has ids and descriptions but no title.
			d := copySample(t, filepath.Join(samples, "v3"))
			b, _ := os.ReadFile(filepath.Join(d, "relationships.parquet"))
			os.WriteFile(filepath.Join(d, "entities.parquet"), b, 0o644)
			return d
		}, []string{"entities.parquet", `"title"`, "missing required column"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			atLeastTwoCores(t) // runLoad takes the concurrent path
			in := tt.setup(t)
			outDir := t.TempDir()
			out := filepath.Join(outDir, "graph.ttl")
			term, _, _ := testTerminal()
			err := runLoad(context.Background(), loadOptions{input: in, turtle: out, base: defaultBase, quiet: true}, term)
			if err == nil {
				t.Fatal("runLoad succeeded; want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if strings.HasPrefix(err.Error(), "write ") {
				t.Errorf("error %q reads as a write error; want the input's error as it is", err)
			}
			if entries, _ := os.ReadDir(outDir); len(entries) != 0 {
				t.Errorf("output directory holds %d entries after a failed load; want none", len(entries))
			}
			// The serial path (one core) fails the same way.
			serr := runLoad(context.Background(), loadOptions{input: in, turtle: out, base: defaultBase, quiet: true, serial: true}, term)
			if serr == nil || serr.Error() != err.Error() {
				t.Errorf("serial load: %v; want the concurrent path's error %v", serr, err)
			}
		})
	}
}

func copySample(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// TestLoadDeterministic: two runs give byte-identical files.
func TestLoadDeterministic(t *testing.T) {
	samples := test.GraphRAGSamples(t)
	for _, v := range test.Samples() {
		for _, format := range []string{"turtle", "ntriples"} {
			t.Run(v+"/"+format, func(t *testing.T) {
				var outs [2][]byte
				for i := range outs {
					out := filepath.Join(t.TempDir(), "g")
					opts := loadOptions{input: filepath.Join(samples, v), base: defaultBase, quiet: true}
					if format == "turtle" {
						opts.turtle, opts.withOntology = out, true
					} else {
						opts.ntriples = out
					}
					term, _, _ := testTerminal()
					if err := runLoad(context.Background(), opts, term); err != nil {
						t.Fatal(err)
					}
					b, err := os.ReadFile(out)
					if err != nil {
						t.Fatal(err)
					}
					outs[i] = b
				}
				if len(outs[0]) == 0 || !bytes.Equal(outs[0], outs[1]) {
					t.Errorf("two runs differ (%d and %d bytes) or are empty", len(outs[0]), len(outs[1]))
				}
			})
		}
	}
}

func TestLoadToStdout(t *testing.T) {
	in := filepath.Join(test.GraphRAGSamples(t), "v2.5.0")
	term, out, errb := testTerminal()
	if err := runLoad(context.Background(), loadOptions{input: in, ntriples: "-", base: defaultBase}, term); err != nil {
		t.Fatal(err)
	}
	lines := bytes.Count(out.Bytes(), []byte("\n"))
	if !strings.Contains(errb.String(), "wrote ") || lines == 0 {
		t.Fatalf("stdout has %d lines, stderr %q", lines, errb.String())
	}
	if !strings.Contains(errb.String(), "wrote "+strconv.Itoa(lines)+" triples") {
		t.Errorf("stderr %q does not report the %d triples written", errb.String(), lines)
	}
}

// TestLoadGuessesStoreType checks that the store kind guessed from a
// default port survives validation (it once went to a copy).
func TestLoadGuessesStoreType(t *testing.T) {
	tests := []struct{ url, want string }{
		{"http://127.0.0.1:7878", "oxigraph"},
		{"http://localhost:3030/ds", "fuseki"},
		{"http://db:8890", "virtuoso"},
		{"http://gdb:7200/repositories/kg", "graphdb"},
	}
	for _, tt := range tests {
		o := loadOptions{input: "out", base: "http://example.org/kg/",
			store: storeOptions{url: tt.url, graph: "http://example.org/g", authScheme: "basic", batchSize: 1}}
		if err := o.validate(); err != nil {
			t.Fatalf("%s: %v", tt.url, err)
		}
		if o.store.storeType != tt.want {
			t.Errorf("%s: store type %q; want %q", tt.url, o.store.storeType, tt.want)
		}
	}
}

// TestLoadEmbed: load --embed writes the graph, then the vector index that
// kgrag embed would write; a bad model server URL fails before anything is
// written.
func TestLoadEmbed(t *testing.T) {
	in := filepath.Join(test.GraphRAGSamples(t), "v3")
	srv := llmtest.Start(t, llmtest.Config{Dim: 16})
	dir := t.TempDir()
	ttl, index := filepath.Join(dir, "g.ttl"), filepath.Join(dir, "idx")
	eo := embedTestOptions(in, index, srv.URL(), "nomic-embed-text")
	opts := loadOptions{input: in, turtle: ttl, base: defaultBase, quiet: true, embed: &eo}
	term, _, _ := testTerminal()
	if err := runLoad(t.Context(), opts, term); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ttl); err != nil {
		t.Errorf("no Turtle written: %v", err)
	}
	idx, err := flat.Open(t.Context(), filepath.Join(index, entityIndexFile), flat.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if info := idx.Info(); info.Count != v3Entities || info.Model != "nomic-embed-text" {
		t.Errorf("index %+v; want %d vectors from nomic-embed-text", info, v3Entities)
	}

	bad := embedTestOptions(in, index, "ftp://nowhere", "m")
	ttl2 := filepath.Join(dir, "g2.ttl")
	opts = loadOptions{input: in, turtle: ttl2, base: defaultBase, quiet: true, embed: &bad}
	if err := runLoad(t.Context(), opts, term); err == nil || !strings.Contains(err.Error(), "--llm-url") {
		t.Errorf("load --embed with a bad --llm-url: %v; want an error naming --llm-url", err)
	}
	if _, err := os.Stat(ttl2); err == nil {
		t.Errorf("load --embed with a bad --llm-url wrote %s", ttl2)
	}
}

// TestLoadTurtleTargets: --turtle into /dev/null leaves the device a
// device, and replacing a 0600 file keeps it 0600.
func TestLoadTurtleTargets(t *testing.T) {
	in := filepath.Join(test.GraphRAGSamples(t), "v3")
	private := filepath.Join(t.TempDir(), "private.ttl")
	if err := os.WriteFile(private, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{os.DevNull, private} {
		if _, stderr, code := runKgrag(t, "load", "-q", "--input", in, "--turtle", path); code != 0 {
			t.Fatalf("kgrag load --turtle %s: exit %d: %s", path, code, stderr)
		}
	}
	if st, err := os.Stat(os.DevNull); err != nil || st.Mode()&os.ModeCharDevice == 0 {
		t.Errorf("%s: %v, %v; want it still a character device", os.DevNull, st.Mode(), err)
	}
	if st, err := os.Stat(private); err != nil || st.Mode().Perm() != 0o600 || st.Size() < 1000 {
		t.Errorf("%s: mode %v, %d bytes, %v; want the Turtle, still 0600", private, st.Mode().Perm(), st.Size(), err)
	}
}

// TestLoadRepeatedLinks: ids repeated inside link lists (text units'
// entity_ids and relationship_ids, communities' entity_ids, as merged
// update tables hold them) are written once, and the triple count printed
// is the number of distinct lines of the N-Triples written.
func TestLoadRepeatedLinks(t *testing.T) {
	ds, err := graphrag.Open(t.Context(), filepath.Join(test.GraphRAGSamples(t), "v3"))
	if err != nil {
		t.Fatal(err)
	}
	repeated := 0
	for i := range ds.TextUnits {
		tu := &ds.TextUnits[i]
		if len(tu.EntityIDs) > 0 {
			tu.EntityIDs = append(tu.EntityIDs, tu.EntityIDs[0])
			repeated++
		}
		if len(tu.RelationshipIDs) > 1 {
			tu.RelationshipIDs = append(tu.RelationshipIDs, tu.RelationshipIDs[1], tu.RelationshipIDs[1])
			repeated += 2
		}
	}
	for i := range ds.Communities {
		if c := &ds.Communities[i]; len(c.EntityIDs) > 0 {
			c.EntityIDs = append(c.EntityIDs, c.EntityIDs...) // each member twice: its entity names the community twice
			repeated += len(c.EntityIDs) / 2
		}
	}
	in := t.TempDir()
	if err := graphrag.Write3x(t.Context(), in, ds); err != nil {
		t.Fatal(err)
	}
	nt := filepath.Join(t.TempDir(), "g.nt")
	_, stderr, code := runKgrag(t, "load", "--input", in, "--ntriples", nt)
	if code != 0 {
		t.Fatalf("kgrag load: exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(nt)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	distinct := map[string]bool{}
	for _, l := range lines {
		distinct[l] = true
	}
	if len(distinct) != len(lines) {
		t.Errorf("%d triples written, %d distinct; want no repeats", len(lines), len(distinct))
	}
	if want := fmt.Sprintf("wrote %d triples", len(distinct)); !strings.Contains(stderr, want) {
		t.Errorf("stderr %q; want %q", stderr, want)
	}
	if want := fmt.Sprintf("%d ids repeated within a link list", repeated); !strings.Contains(stderr, want) {
		t.Errorf("stderr %q; want %q", stderr, want)
	}
}

// TestLoadUpdateTables: an output whose entities table repeats an id with
// another title (as `graphrag update` merges tables) loads with one title
// per entity node and a note saying what was left out, and embeds too.
func TestLoadUpdateTables(t *testing.T) {
	ds, err := graphrag.Open(t.Context(), filepath.Join(test.GraphRAGSamples(t), "v3"))
	if err != nil {
		t.Fatal(err)
	}
	ds.Entities = ds.Entities[:529]
	dup := ds.Entities[4]
	dup.Title = "A SECOND TITLE"
	ds.Entities = append(ds.Entities, dup)
	in := t.TempDir()
	if err := graphrag.Write3x(t.Context(), in, ds); err != nil {
		t.Fatal(err)
	}
	nt := filepath.Join(t.TempDir(), "g.nt")
	_, stderr, code := runKgrag(t, "load", "--input", in, "--ntriples", nt)
	if code != 0 || !strings.Contains(stderr, "note: entities: 1 rows repeat the id of an earlier row (0 identical to it, 1 different") {
		t.Fatalf("kgrag load: exit %d, stderr %q; want 0 and a note on the repeated id", code, stderr)
	}
	b, err := os.ReadFile(nt)
	if err != nil {
		t.Fatal(err)
	}
	titles := map[string]int{}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) > 2 && f[1] == "<http://ormynet.com/ns/msft-graphrag#title>" {
			titles[f[0]]++
		}
	}
	for s, n := range titles {
		if n > 1 {
			t.Errorf("%s has %d gr:title triples; want 1", s, n)
		}
	}
	if strings.Contains(string(b), "A SECOND TITLE") {
		t.Error("the repeated row's title was written")
	}
	srv := llmtest.Start(t, llmtest.Config{Dim: 8})
	if _, stderr, code := runKgrag(t, "embed", "-q", "--input", in, "--index", t.TempDir(), "--llm-url", srv.URL(), "--embed-model", "m"); code != 0 {
		t.Errorf("kgrag embed: exit %d: %s", code, stderr)
	}
}

// TestLoadWithOntologyCount: with --with-ontology the success line does
// not pass the data's triple count off as the file's.
func TestLoadWithOntologyCount(t *testing.T) {
	in := filepath.Join(test.GraphRAGSamples(t), "v3")
	_, stderr, code := runKgrag(t, "load", "--input", in, "--turtle", filepath.Join(t.TempDir(), "g.ttl"), "--with-ontology")
	if code != 0 || !strings.Contains(stderr, "triples of data and the gr: ontology to") {
		t.Errorf("kgrag load --with-ontology: exit %d, %q; want the count named as the data's", code, stderr)
	}
}

// TestLoadIRIsFromKeys: two runs of Microsoft GraphRAG name the same
// entities and relationships with different ids (UUIDs made anew each
// run). The second run is simulated from the v3 sample by giving every
// entity and relationship a new id, consistently across the tables. With
// --iris keys both load to the same entity and relationship IRIs; with
// the default ids they share none.
func TestLoadIRIsFromKeys(t *testing.T) {
	ctx := context.Background()
	first := filepath.Join(test.GraphRAGSamples(t), "v3")
	ds, err := graphrag.Open(ctx, first)
	if err != nil {
		t.Fatal(err)
	}
	renamed := func(id string) string { return "run2-" + id }
	renameAll := func(ids []string) {
		for j := range ids {
			ids[j] = renamed(ids[j])
		}
	}
	for i := range ds.Entities {
		ds.Entities[i].ID = renamed(ds.Entities[i].ID)
	}
	for i := range ds.Relationships {
		r := &ds.Relationships[i]
		r.ID, r.SourceID, r.TargetID = renamed(r.ID), renamed(r.SourceID), renamed(r.TargetID)
	}
	for i := range ds.TextUnits {
		renameAll(ds.TextUnits[i].EntityIDs)
		renameAll(ds.TextUnits[i].RelationshipIDs)
	}
	for i := range ds.Communities {
		renameAll(ds.Communities[i].EntityIDs)
		renameAll(ds.Communities[i].RelationshipIDs)
	}
	second := t.TempDir()
	if err := graphrag.Write3x(ctx, second, ds); err != nil {
		t.Fatal(err)
	}
	// subjects returns the entity and relationship IRIs of a load.
	subjects := func(t *testing.T, dir, iris string) map[string]bool {
		t.Helper()
		out := filepath.Join(t.TempDir(), "g.nt")
		term, _, _ := testTerminal()
		if err := runLoad(ctx, loadOptions{input: dir, ntriples: out, base: defaultBase, iris: iris, quiet: true}, term); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{}
		for _, line := range strings.Split(string(b), "\n") {
			for _, class := range []string{ontology.Entity, ontology.Relationship} {
				if strings.HasSuffix(line, " <"+rdf.RDFType+"> <"+class+"> .") {
					got[strings.Fields(line)[0]] = true
				}
			}
		}
		return got
	}
	a, b := subjects(t, first, "keys"), subjects(t, second, "keys")
	if len(a) < 500 || !maps.Equal(a, b) {
		t.Errorf("--iris keys: %d and %d entity and relationship IRIs, equal %v; want the same several hundred", len(a), len(b), maps.Equal(a, b))
	}
	if !a["<"+defaultBase+"entity/EBENEZER%20SCROOGE>"] {
		t.Errorf("--iris keys: no IRI entity/EBENEZER%%20SCROOGE among %d", len(a))
	}
	ia, ib := subjects(t, first, "ids"), subjects(t, second, "ids")
	if len(ia) != len(a) {
		t.Errorf("--iris ids gives %d records, keys %d; want the same number", len(ia), len(a))
	}
	for s := range ia {
		// Unresolved entities' ids are made from their titles already.
		if ib[s] && !strings.Contains(s, "/entity/title%3A") {
			t.Errorf("--iris ids: %s in both runs; the renamed ids should share none", s)
			break
		}
	}
}
