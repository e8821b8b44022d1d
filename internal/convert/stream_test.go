package convert_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/convert"
	"github.com/kgrag/kgrag/internal/synth"
	"github.com/kgrag/kgrag/internal/test"
	"github.com/kgrag/kgrag/ontology"
	"github.com/kgrag/kgrag/rdfenc"
)

// reference writes what kgrag load wrote before tables were read in
// windows: the whole dataset (graphrag.Open) mapped serially.
func reference(t *testing.T, dir string, turtle bool) []byte {
	t.Helper()
	ctx := context.Background()
	ds, err := graphrag.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	m := ontology.Mapper{Base: "http://kgrag.test/"}
	if turtle {
		enc := rdfenc.NewTurtle(&buf, prefixes)
		if _, err := m.Map(ctx, ds, enc); err != nil {
			t.Fatal(err)
		}
		if err := enc.Close(); err != nil {
			t.Fatal(err)
		}
	} else {
		enc := rdfenc.NewNTriples(&buf)
		if _, err := m.Map(ctx, ds, enc); err != nil {
			t.Fatal(err)
		}
		if err := enc.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// streamed writes dir as kgrag load does: a graphrag.Walker handing over
// windows of rows rows (0: sized by bytes), with workers goroutines
// (0: the serial Stream).
func streamed(ctx context.Context, dir string, turtle bool, workers, rows int, w io.Writer) error {
	wk, err := graphrag.NewWalker(ctx, dir)
	if err != nil {
		return err
	}
	defer wk.Close()
	ds := wk.Dataset()
	m := ontology.Mapper{Base: "http://kgrag.test/", Run: ds.Run, Release: ds.Release}
	var enc interface {
		Close() error
	}
	var err2 error
	if turtle {
		e := rdfenc.NewTurtle(w, prefixes)
		enc = e
		if workers == 0 {
			s, _ := m.Stream(e)
			v := s.Visitor()
			v.WindowRows = rows
			err2 = wk.Walk(ctx, v)
		} else {
			s, _ := m.Stream(nil)
			_, err2 = convert.Turtle(ctx, wk, s, e, convert.Options{Workers: workers, WindowRows: rows})
		}
	} else {
		e := rdfenc.NewNTriples(w)
		enc = flusher{e}
		if workers == 0 {
			s, _ := m.Stream(e)
			v := s.Visitor()
			v.WindowRows = rows
			err2 = wk.Walk(ctx, v)
		} else {
			s, _ := m.Stream(nil)
			_, err2 = convert.NTriples(ctx, wk, s, e, convert.Options{Workers: workers, WindowRows: rows})
		}
	}
	if err2 != nil {
		return err2
	}
	return enc.Close()
}

type flusher struct{ e *rdfenc.NTriples }

func (f flusher) Close() error { return f.e.Flush() }

// fuzzCorpus returns a dataset made of the ontology's fuzz corpus (ids,
// titles and descriptions that broke or nearly broke the mapping): one
// entity per entry, a relationship from each to the next and one to a
// title no entity has.
func fuzzCorpus(t *testing.T) *graphrag.Dataset {
	t.Helper()
	dir := filepath.Join(test.RepoRoot(t), "ontology", "testdata", "fuzz", "FuzzMappingRoundTrip")
	files, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	ds := &graphrag.Dataset{Release: graphrag.Release3}
	for i, f := range files {
		b, err := os.ReadFile(filepath.Join(dir, f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		var vals []string
		for _, line := range strings.Split(string(b), "\n")[1:] {
			if v, ok := strings.CutPrefix(line, "string("); ok {
				s, err := strconv.Unquote(strings.TrimSuffix(v, ")"))
				if err != nil {
					t.Fatalf("%s: %v", f.Name(), err)
				}
				vals = append(vals, s)
			}
		}
		if len(vals) != 3 {
			t.Fatalf("%s: %d values; want 3", f.Name(), len(vals))
		}
		// Ids must be unique and not empty, titles not empty: the reader
		// refuses the rest.
		id, title := fmt.Sprintf("%s#%d", vals[0], i), vals[1]+"#"
		ds.Entities = append(ds.Entities, graphrag.Entity{ID: id, Title: title, Description: vals[2], Type: "PERSON"})
	}
	for i := range ds.Entities {
		next := ds.Entities[(i+1)%len(ds.Entities)]
		ds.Relationships = append(ds.Relationships,
			graphrag.Relationship{ID: fmt.Sprintf("r%d", i), Source: ds.Entities[i].Title, Target: next.Title,
				Description: ds.Entities[i].Description, Weight: 1, HasWeight: true},
			graphrag.Relationship{ID: fmt.Sprintf("u%d", i), Source: ds.Entities[i].Title, Target: "UNKNOWN " + ds.Entities[i].Title})
	}
	return ds
}

// write3x writes ds as a 3.x output in a new folder.
func write3x(t *testing.T, ds *graphrag.Dataset) string {
	t.Helper()
	dir := t.TempDir()
	if err := graphrag.Write3x(context.Background(), dir, ds); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestStreamMatchesWhole: kgrag load's path, a graphrag.Walker handing
// over windows (of 7 rows, cutting inside pages, and sized by bytes) to
// convert on 2 workers or to the serial Stream, writes byte for byte what
// the serial mapping of the whole dataset writes, for the four samples, a
// synthetic set and the fuzz corpus, in both formats.
func TestStreamMatchesWhole(t *testing.T) {
	ctx := context.Background()
	dirs := map[string]string{
		"synthetic": write3x(t, synth.Generate(5, synth.Sizes{Entities: 1500, Relationships: 4500, TextUnits: 300, Communities: 300})),
		"fuzz":      write3x(t, fuzzCorpus(t)),
	}
	for _, v := range test.Samples() {
		dirs[v] = filepath.Join(test.GraphRAGSamples(t), v)
	}
	for name, dir := range dirs {
		for _, turtle := range []bool{true, false} {
			want := reference(t, dir, turtle)
			for _, workers := range []int{0, 2} {
				for _, rows := range []int{7, 0} {
					t.Run(fmt.Sprintf("%s/turtle=%v/workers=%d/rows=%d", name, turtle, workers, rows), func(t *testing.T) {
						var got bytes.Buffer
						if err := streamed(ctx, dir, turtle, workers, rows, &got); err != nil {
							t.Fatal(err)
						}
						if !bytes.Equal(got.Bytes(), want) {
							t.Errorf("output (%d bytes) differs from the whole read's (%d bytes)", got.Len(), len(want))
						}
					})
				}
			}
		}
	}
}

// TestStreamLeftOut: rows the reader leaves out (a blank relationship end,
// a blank text unit id) are left out alike whether windows are written on
// workers or serially or the dataset is mapped whole: the outputs are the
// same bytes, and the left-out relationship is in none of them.
func TestStreamLeftOut(t *testing.T) {
	ds := synth.Generate(5, synth.Sizes{Entities: 1500, Relationships: 4500, TextUnits: 300, Communities: 300})
	ds.Relationships[3000].Target = ""
	gone := ds.Relationships[3000].ID
	ds.TextUnits[250].ID = ""
	dir := write3x(t, ds)
	want := reference(t, dir, true)
	if bytes.Contains(want, []byte(gone)) {
		t.Fatalf("the whole read's output holds left-out relationship %s", gone)
	}
	for _, workers := range []int{0, 2} {
		for _, rows := range []int{7, 0} {
			var got bytes.Buffer
			if err := streamed(context.Background(), dir, true, workers, rows, &got); err != nil {
				t.Fatalf("workers=%d rows=%d: %v", workers, rows, err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("workers=%d rows=%d: output (%d bytes) differs from the whole read's (%d bytes)", workers, rows, got.Len(), len(want))
			}
		}
	}
}

// whole hands tables over whole, as kgrag load read them before windows.
type whole struct{ *graphrag.Walker }

func (w whole) Walk(ctx context.Context, v graphrag.Visitor) error {
	v.Windows = false
	return w.Walker.Walk(ctx, v)
}

// peakHeap converts dir to Turtle (discarded) on 2 workers, whole tables
// or in windows, and returns the largest heap seen (objects, live and not
// yet swept) while the collector runs often (GOGC=20), so that it tracks
// the live heap.
func peakHeap(t *testing.T, dir string, windows bool, rows int) uint64 {
	t.Helper()
	ctx := context.Background()
	defer debug.SetGCPercent(debug.SetGCPercent(20))
	wk, err := graphrag.NewWalker(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer wk.Close()
	var walker convert.Walker = wk
	if !windows {
		walker = whole{wk}
	}
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak uint64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	s, _ := ontology.Mapper{Base: "http://kgrag.test/"}.Stream(nil)
	enc := rdfenc.NewTurtle(io.Discard, prefixes)
	_, err = convert.Turtle(ctx, walker, s, enc, convert.Options{Workers: 2, WindowRows: rows})
	close(done)
	<-stopped
	if err != nil {
		t.Fatal(err)
	}
	return peak
}

// TestStreamHeapBounded: converting a synthetic set of 50k entities in
// windows keeps the heap well below what reading each table whole (as
// kgrag load did) takes.
func TestStreamHeapBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and converts 50k entities")
	}
	// Few communities, so that the large tables are the ones read in
	// windows (the community reports are read whole).
	dir := write3x(t, synth.Generate(7, synth.Sizes{Entities: 50000, Relationships: 150000, TextUnits: 10000, Communities: 250}))
	wholePeak := peakHeap(t, dir, false, 0)
	winPeak := peakHeap(t, dir, true, 1024)
	autoPeak := peakHeap(t, dir, true, 0)
	t.Logf("peak heap: whole tables %d MB, windows of 1024 rows %d MB, sized by bytes %d MB", wholePeak>>20, winPeak>>20, autoPeak>>20)
	// Measured 125 MB whole against 68 MB in windows: a bound relative to
	// the whole read, in the same process, does not depend on the machine.
	if float64(winPeak) > 0.8*float64(wholePeak) {
		t.Errorf("windows of 1024 rows peak at %d MB, more than 80%% of the whole read's %d MB", winPeak>>20, wholePeak>>20)
	}
}
