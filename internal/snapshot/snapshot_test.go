package snapshot_test

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/mmapfile"
	"github.com/kgrag/kgrag/internal/snapshot"
	"github.com/kgrag/kgrag/internal/test"
)

func openSample(t *testing.T, name string) *graphrag.Dataset {
	t.Helper()
	ds, err := graphrag.Open(context.Background(), filepath.Join(test.GraphRAGSamples(t), name))
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// hostile is a dataset with what real outputs hold and the samples do
// not: repeated ids, titles and community rows, a placeholder sharing a
// title, members the entities table lacks, self-loops, empty and nil
// lists, non-integer ids, other scripts.
func hostile() *graphrag.Dataset {
	ds := &graphrag.Dataset{
		Entities: []graphrag.Entity{
			{ID: "e1", Title: "ALPHA", HumanReadableID: "0", Description: "first", Degree: 3, HasDegree: true, TextUnitIDs: []string{"u2", "u1"}, Communities: []string{"1", "3"}},
			{ID: "e2", Title: "北京", HumanReadableID: "1", Description: "", TextUnitIDs: []string{}, Communities: nil},
			{ID: "e1", Title: "ALPHA-DUP", HumanReadableID: "2", Description: "repeated id"},
			{ID: "e3", Title: "GAMMA", HumanReadableID: "x7", Description: "line\nbreak | pipe \"quote\""},
			{ID: "p1", Title: "GAMMA", Placeholder: true},
			{ID: "p2", Title: "DELTA", Placeholder: true},
			{ID: "e4", Title: "DELTA", HumanReadableID: "4"},
		},
		TextUnits: []graphrag.TextUnit{
			{ID: "u1", HumanReadableID: "1", Text: "one", NTokens: 5, HasNTokens: true, EntityIDs: []string{"e1", "e1", "e2", "ghost"}, RelationshipIDs: []string{"r1"}},
			{ID: "u2", HumanReadableID: "0", Text: "two", EntityIDs: []string{"e3"}},
			{ID: "u1", HumanReadableID: "9", Text: "repeated id", EntityIDs: []string{"e4"}},
		},
		Relationships: []graphrag.Relationship{
			{ID: "r1", HumanReadableID: "2", Source: "ALPHA", Target: "北京", SourceID: "e1", TargetID: "e2", Weight: 1.5, HasWeight: true, Rank: 4, HasRank: true, TextUnitIDs: []string{"u1"}},
			{ID: "r2", HumanReadableID: "10", Source: "ALPHA", Target: "ALPHA", SourceID: "e1", TargetID: "e1"},
			{ID: "r3", HumanReadableID: "1", Source: "GAMMA", Target: "DELTA", SourceID: "e3", TargetID: "p2", Weight: math.Inf(1), HasWeight: true},
			{ID: "r1", HumanReadableID: "abc", Source: "北京", Target: "ghost", SourceID: "e2", TargetID: "ghost"},
		},
		Communities: []graphrag.Community{
			{ID: "c0", Community: "0", Level: 0, Title: "root", EntityIDs: []string{"e1", "e2", "e3", "ghost"}, Weight: 0.5,
				Report: &graphrag.CommunityReport{Title: "R0", Summary: "s", FullContent: "full", Rank: 7.5, HasRank: true}},
			{ID: "c1", Community: "1", Level: 1, Parent: "0", EntityIDs: []string{"e1", "e1"}, Report: &graphrag.CommunityReport{Title: "R1"}},
			{ID: "c2", Community: "2", Level: 1, Parent: "0", EntityIDs: []string{"e2", "e3"}},
			{ID: "c3", Community: "3", Level: 2, Parent: "1", EntityIDs: []string{"e1"}},
			{ID: "c3b", Community: "3", Level: 2, Parent: "1", EntityIDs: []string{"e1"}},
			{ID: "c9", Community: "x", Level: 2, EntityIDs: []string{"e3"}},
			{ID: "c10", Community: "10", Level: 5, EntityIDs: []string{"ghost"}},
		},
	}
	return ds
}

func datasets(t *testing.T) map[string]*graphrag.Dataset {
	sets := map[string]*graphrag.Dataset{"hostile": hostile(), "empty": {}}
	for _, s := range test.Samples() {
		sets[s] = openSample(t, s)
	}
	return sets
}

// The fields a snapshot keeps (see tables.go).
func keptEntity(e graphrag.Entity) graphrag.Entity {
	return graphrag.Entity{ID: e.ID, Title: e.Title, HumanReadableID: e.HumanReadableID, Description: e.Description,
		HasDegree: e.HasDegree, Placeholder: e.Placeholder, Degree: e.Degree, TextUnitIDs: e.TextUnitIDs, Communities: e.Communities}
}

func keptUnit(u graphrag.TextUnit) graphrag.TextUnit {
	return graphrag.TextUnit{ID: u.ID, HumanReadableID: u.HumanReadableID, Text: u.Text, HasNTokens: u.HasNTokens,
		NTokens: u.NTokens, RelationshipIDs: u.RelationshipIDs}
}

func keptRelationship(r graphrag.Relationship) graphrag.Relationship {
	return graphrag.Relationship{ID: r.ID, HumanReadableID: r.HumanReadableID, Source: r.Source, Target: r.Target,
		SourceID: r.SourceID, TargetID: r.TargetID, Description: r.Description, HasWeight: r.HasWeight, HasRank: r.HasRank,
		Weight: r.Weight, Rank: r.Rank, TextUnitIDs: r.TextUnitIDs}
}

func keptCommunity(c graphrag.Community) graphrag.Community {
	k := graphrag.Community{Community: c.Community, ID: c.ID, HumanReadableID: c.HumanReadableID, Level: c.Level,
		Parent: c.Parent, Title: c.Title, Weight: c.Weight}
	if r := c.Report; r != nil {
		k.Report = &graphrag.CommunityReport{Title: r.Title, Summary: r.Summary, FullContent: r.FullContent, Rank: r.Rank, HasRank: r.HasRank}
	}
	return k
}

// first indexes rows by key, the first row standing; skip leaves a row out.
func first[T any](rows []T, key func(T) string, skip func(T) bool) map[string]int {
	m := map[string]int{}
	for i, r := range rows {
		if _, dup := m[key(r)]; !dup && (skip == nil || !skip(r)) {
			m[key(r)] = i
		}
	}
	return m
}

// deepestBrute is the roll-up as retrieval computed it before snapshots:
// every member's deepest community up to maxLevel.
func deepestBrute(ds *graphrag.Dataset, maxLevel int64) map[int]bool {
	commsOf := map[string][]int{}
	for i, c := range ds.Communities {
		for _, id := range c.EntityIDs {
			commsOf[id] = append(commsOf[id], i)
		}
	}
	comms := ds.Communities
	deeper := func(x, y int) bool {
		if comms[x].Level != comms[y].Level {
			return comms[x].Level > comms[y].Level
		}
		return graphrag.CompareIDs(comms[x].Community, comms[y].Community) > 0
	}
	out := map[int]bool{}
	for _, list := range commsOf {
		best := -1
		for _, ci := range list {
			if comms[ci].Level <= maxLevel && (best < 0 || deeper(ci, best)) {
				best = ci
			}
		}
		if best >= 0 {
			out[best] = true
		}
	}
	return out
}

// checkGraph compares every record and lookup of g with ds, computed
// here with maps.
func checkGraph(t *testing.T, g *snapshot.Graph, ds *graphrag.Dataset) {
	t.Helper()
	if g.Entities() != len(ds.Entities) || g.TextUnits() != len(ds.TextUnits) ||
		g.Relationships() != len(ds.Relationships) || g.Communities() != len(ds.Communities) {
		t.Fatalf("counts %d/%d/%d/%d, dataset %d/%d/%d/%d", g.Entities(), g.TextUnits(), g.Relationships(), g.Communities(),
			len(ds.Entities), len(ds.TextUnits), len(ds.Relationships), len(ds.Communities))
	}
	for i, e := range ds.Entities {
		got, err := g.Entity(i)
		if err != nil || !reflect.DeepEqual(got, keptEntity(e)) {
			t.Fatalf("entity %d: %+v, %v; want %+v", i, got, err, keptEntity(e))
		}
		name, err := g.EntityName(i)
		if err != nil || name != (snapshot.EntityName{ID: e.ID, Title: e.Title, HumanReadableID: e.HumanReadableID}) {
			t.Fatalf("entity name %d: %+v, %v", i, name, err)
		}
	}
	for i, u := range ds.TextUnits {
		if got, err := g.TextUnit(i); err != nil || !reflect.DeepEqual(got, keptUnit(u)) {
			t.Fatalf("text unit %d: %+v, %v; want %+v", i, got, err, keptUnit(u))
		}
	}
	for i, r := range ds.Relationships {
		if got, err := g.Relationship(i); err != nil || !reflect.DeepEqual(got, keptRelationship(r)) {
			t.Fatalf("relationship %d: %+v, %v; want %+v", i, got, err, keptRelationship(r))
		}
	}
	for i, c := range ds.Communities {
		if got, err := g.Community(i); err != nil || !reflect.DeepEqual(got, keptCommunity(c)) {
			t.Fatalf("community %d: %+v, %v; want %+v", i, got, err, keptCommunity(c))
		}
	}

	// Hash lookups: every key finds its first row, and misses miss.
	lookups := []struct {
		name string
		want map[string]int
		find func(string) (int, bool, error)
	}{
		{"entity id", first(ds.Entities, func(e graphrag.Entity) string { return e.ID }, nil), g.EntityIndex},
		{"title", first(ds.Entities, func(e graphrag.Entity) string { return e.Title }, func(e graphrag.Entity) bool { return e.Placeholder }), g.EntityByTitle},
		{"text unit", first(ds.TextUnits, func(u graphrag.TextUnit) string { return u.ID }, nil), g.TextUnitIndex},
		{"community", first(ds.Communities, func(c graphrag.Community) string { return c.Community }, nil), g.CommunityIndex},
	}
	for _, l := range lookups {
		for key, want := range l.want {
			if got, ok, err := l.find(key); err != nil || !ok || got != want {
				t.Fatalf("%s %q: row %d, %v, %v; want %d", l.name, key, got, ok, err, want)
			}
		}
		for _, miss := range []string{"", "no such key", "e1 ", "\x00"} {
			if _, known := l.want[miss]; known {
				continue
			}
			if got, ok, err := l.find(miss); err != nil || ok {
				t.Fatalf("%s %q: found row %d, %v", l.name, miss, got, err)
			}
		}
	}

	// Adjacency, membership and mentions, per entity id named anywhere.
	rels, comms, units := map[string][]int{}, map[string][]int{}, map[string][]int{}
	names := map[string]bool{}
	for i, r := range ds.Relationships {
		rels[r.SourceID] = append(rels[r.SourceID], i)
		if r.TargetID != r.SourceID {
			rels[r.TargetID] = append(rels[r.TargetID], i)
		}
		names[r.SourceID], names[r.TargetID] = true, true
	}
	for i, c := range ds.Communities {
		for _, id := range c.EntityIDs {
			comms[id] = append(comms[id], i)
			names[id] = true
		}
	}
	firstUnit := first(ds.TextUnits, func(u graphrag.TextUnit) string { return u.ID }, nil)
	for i, u := range ds.TextUnits {
		if firstUnit[u.ID] != i {
			continue
		}
		seen := map[string]bool{}
		for _, id := range u.EntityIDs {
			if !seen[id] {
				seen[id] = true
				units[id] = append(units[id], i)
			}
			names[id] = true
		}
	}
	for _, e := range ds.Entities {
		names[e.ID] = true
	}
	for id := range names {
		k, ok, err := g.Key(id)
		if err != nil || !ok {
			t.Fatalf("key %q: %v, %v", id, ok, err)
		}
		for _, l := range []struct {
			name string
			want []int
			get  func(int) ([]int, error)
		}{{"relationships", rels[id], g.RelationshipsOf}, {"communities", comms[id], g.CommunitiesOf}, {"text units", units[id], g.TextUnitsOf}} {
			got, err := l.get(k)
			if err != nil || !slices.Equal(got, l.want) {
				t.Fatalf("%s of %q: %v, %v; want %v", l.name, id, got, err, l.want)
			}
		}
	}

	order := make([]int, len(ds.Relationships))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(x, y int) int {
		return graphrag.CompareIDs(ds.Relationships[x].HumanReadableID, ds.Relationships[y].HumanReadableID)
	})
	for p, i := range order {
		if got := g.RelationshipPos(i); got != p {
			t.Fatalf("relationship %d: position %d, want %d", i, got, p)
		}
	}

	var maxLevel int64
	for _, c := range ds.Communities {
		maxLevel = max(maxLevel, c.Level)
	}
	for level := int64(-1); level <= maxLevel+1; level++ {
		want := deepestBrute(ds, level)
		for i, c := range ds.Communities {
			if got := g.Deepest(i, c.Level, level); got != want[i] {
				t.Fatalf("community row %d (number %s, level %d) deepest up to level %d: %v, want %v", i, c.Community, c.Level, level, got, want[i])
			}
		}
	}
}

func TestBuildMatchesDataset(t *testing.T) {
	for name, ds := range datasets(t) {
		t.Run(name, func(t *testing.T) { checkGraph(t, snapshot.Build(ds), ds) })
	}
}

// copySample copies a sample's tables into a fresh folder, so that the
// test can change them.
func copySample(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join(test.GraphRAGSamples(t), name)
	dir := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".parquet") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// write builds the snapshot of the output in dir as kgrag embed does.
func write(t *testing.T, dir string) (string, *graphrag.Dataset) {
	t.Helper()
	files, err := snapshot.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := graphrag.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), snapshot.File)
	if err := snapshot.WriteFile(context.Background(), path, ds, files); err != nil {
		t.Fatal(err)
	}
	return path, ds
}

func TestWriteOpenCheck(t *testing.T) {
	for _, name := range test.Samples() {
		t.Run(name, func(t *testing.T) {
			dir := copySample(t, name)
			path, ds := write(t, dir)
			g, err := snapshot.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			checkGraph(t, g, ds)
			if err := g.Check(dir); err != nil {
				t.Fatalf("fresh snapshot: %v", err)
			}
			if m := g.Meta(); m.Entities != len(ds.Entities) || len(m.Files) == 0 {
				t.Fatalf("meta %+v", m)
			}

		})
	}
}

func TestCheckFindsChanges(t *testing.T) {
	// Each change to the output makes the snapshot stale, naming the file.
	for _, c := range []struct {
		name, file string
		do         func(path string) error
	}{
		{"touched", "entities.parquet", func(p string) error { return os.Chtimes(p, time.Now(), time.Now().Add(time.Hour)) }},
		{"grown", "relationships.parquet", appendByte},
		{"removed", "community_reports.parquet", os.Remove},
		{"added", "kgrag_run.json", func(p string) error { return os.WriteFile(p, []byte("{}"), 0o644) }},
		{"added in the other naming", "create_final_entities.parquet", func(p string) error { return os.WriteFile(p, []byte("x"), 0o644) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := copySample(t, "v3")
			path, _ := write(t, dir)
			g, err := snapshot.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			if err := c.do(filepath.Join(dir, c.file)); err != nil {
				t.Fatal(err)
			}
			err = g.Check(dir)
			if !errors.Is(err, snapshot.ErrStale) || !strings.Contains(err.Error(), c.file) {
				t.Errorf("Check gave %v, want ErrStale naming %s", err, c.file)
			}
		})
	}
	// A snapshot built in memory records no files: never current.
	if err := snapshot.Build(hostile()).Check(copySample(t, "v3")); !errors.Is(err, snapshot.ErrStale) {
		t.Errorf("Check of a snapshot built in memory: %v", err)
	}
}

func appendByte(path string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.Write([]byte{0}); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// exercise runs every lookup of g; damaged data may give errors, never a
// panic.
func exercise(g *snapshot.Graph, ds *graphrag.Dataset) {
	for i := range g.Entities() {
		g.Entity(i)
	}
	for i := range g.TextUnits() {
		g.TextUnit(i)
	}
	for i := range g.Relationships() {
		g.Relationship(i)
	}
	for i := range g.Communities() {
		g.Community(i)
	}
	for _, e := range ds.Entities {
		g.EntityIndex(e.ID)
		g.EntityByTitle(e.Title)
		if k, ok, err := g.Key(e.ID); ok && err == nil {
			g.RelationshipsOf(k)
			g.CommunitiesOf(k)
			g.TextUnitsOf(k)
		}
	}
	for _, u := range ds.TextUnits {
		g.TextUnitIndex(u.ID)
	}
	for _, c := range ds.Communities {
		g.CommunityIndex(c.Community)
	}
}

func TestCorruptFiles(t *testing.T) {
	dir := copySample(t, "v3")
	path, ds := write(t, dir)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	damaged := func(f func([]byte) []byte) string {
		p := filepath.Join(t.TempDir(), snapshot.File)
		if err := os.WriteFile(p, f(slices.Clone(good)), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name string
		f    func([]byte) []byte
	}{
		{"empty", func([]byte) []byte { return nil }},
		{"not a snapshot", func([]byte) []byte { return []byte("PAR1 this is a parquet file, not a snapshot, honest") }},
		{"cut in the header", func(b []byte) []byte { return b[:100] }},
		{"cut in a section", func(b []byte) []byte { return b[:len(b)/2] }},
		{"cut by one byte", func(b []byte) []byte { return b[:len(b)-1] }},
		{"version", func(b []byte) []byte { b[8]++; return b }},
		{"section table", func(b []byte) []byte { b[30] ^= 0x40; return b }},
		{"checksum", func(b []byte) []byte { b[len(magicHeader(b))-8] ^= 1; return b }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := snapshot.Open(damaged(tc.f))
			if !errors.Is(err, snapshot.ErrCorrupt) || !strings.Contains(err.Error(), "kgrag embed") {
				t.Fatalf("Open: %v, want ErrCorrupt saying how to rebuild", err)
			}
		})
	}

	// Damage inside the sections is found on access: random flips give
	// errors or other values, never a panic or a read out of bounds.
	r := rand.New(rand.NewPCG(1, 2))
	var corrupt int
	for range 300 {
		p := damaged(func(b []byte) []byte {
			for range 8 {
				i := len(magicHeader(b)) + r.IntN(len(b)-len(magicHeader(b)))
				b[i] ^= byte(1 + r.IntN(255))
			}
			return b
		})
		g, err := snapshot.Open(p)
		if err != nil {
			if !errors.Is(err, snapshot.ErrCorrupt) {
				t.Fatalf("Open: %v", err)
			}
			continue
		}
		func() {
			defer func() {
				if v := recover(); v != nil {
					t.Fatalf("lookups on a damaged file panicked: %v", v)
				}
			}()
			exercise(g, ds)
		}()
		if _, err := g.Entity(0); errors.Is(err, snapshot.ErrCorrupt) {
			corrupt++
		}
		g.Close()
	}
	t.Logf("%d of 300 damaged files refused entity 0", corrupt)

	// A damaged record offset is named.
	p := damaged(func(b []byte) []byte {
		entOff := binary.LittleEndian.Uint64(b[16+16*1:]) // section 1: the entities' offsets
		binary.LittleEndian.PutUint64(b[entOff+8:], math.MaxUint64/2)
		return b
	})
	g, err := snapshot.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Entity(0); !errors.Is(err, snapshot.ErrCorrupt) || !strings.Contains(err.Error(), "entity 0") {
		t.Fatalf("Entity 0 with a damaged offset: %v", err)
	}
	g.Close()
	if _, err := g.Entity(0); !errors.Is(err, mmapfile.ErrClosed) {
		t.Fatalf("Entity after Close: %v, want ErrClosed", err)
	}
	if _, _, err := g.EntityIndex(ds.Entities[0].ID); !errors.Is(err, mmapfile.ErrClosed) {
		t.Fatalf("EntityIndex after Close: %v, want ErrClosed", err)
	}
}

// magicHeader is the fixed header of a snapshot file (the sections start
// after it).
func magicHeader(b []byte) []byte { return b[:8+4+4+24*16+8] }

func TestBuildIsDeterministic(t *testing.T) {
	dir := copySample(t, "v2.5.0")
	p1, _ := write(t, dir)
	p2, _ := write(t, dir)
	a, _ := os.ReadFile(p1)
	b, _ := os.ReadFile(p2)
	if !slices.Equal(a, b) {
		t.Fatal("two snapshots of the same output differ")
	}
	if len(a) == 0 {
		t.Fatal("empty snapshot")
	}
}
