package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/synth"
	"github.com/kgrag/kgrag/internal/test"
)

// atLeastTwoCores makes runLoad take the concurrent path (internal/convert)
// even on a one-core runner, for the length of the test.
func atLeastTwoCores(t *testing.T) {
	if n := runtime.GOMAXPROCS(0); n < 2 {
		runtime.GOMAXPROCS(2)
		t.Cleanup(func() { runtime.GOMAXPROCS(n) })
	}
}

// loadBoth runs the load of opts serially and concurrently and returns
// each one's output, summary (stderr less the time taken) and error.
func loadBoth(t *testing.T, opts loadOptions, turtle bool) (out [2][]byte, summary [2]string, errs [2]error) {
	t.Helper()
	atLeastTwoCores(t)
	path := filepath.Join(t.TempDir(), "g") // one name: the summary says it
	for i, serial := range []bool{true, false} {
		o := opts
		o.serial = serial
		os.Remove(path)
		if turtle {
			o.turtle = path
		} else {
			o.ntriples = path
		}
		term, _, errb := testTerminal()
		errs[i] = runLoad(context.Background(), o, term)
		out[i], _ = os.ReadFile(path)
		summary[i] = tookRE.ReplaceAllString(errb.String(), "in Xs")
	}
	return out, summary, errs
}

var tookRE = regexp.MustCompile(`in [0-9.]+s`)

// TestLoadConcurrentMatchesSerial: on every sample and a synthetic set big
// enough for many batches per table, in both formats and with the options
// that change the mapping, the concurrent path writes the serial path's
// bytes and reports the same counts.
func TestLoadConcurrentMatchesSerial(t *testing.T) {
	samples := test.GraphRAGSamples(t)
	dirs := map[string]string{}
	for _, v := range test.Samples() {
		dirs[v] = filepath.Join(samples, v)
	}
	synthDir := t.TempDir()
	sizes := synth.Sizes{Entities: 3000, Relationships: 9000, TextUnits: 600, Communities: 150}
	if err := graphrag.Write3x(context.Background(), synthDir, synth.Generate(7, sizes)); err != nil {
		t.Fatal(err)
	}
	dirs["synthetic"] = synthDir
	variants := []struct {
		name string
		opts loadOptions
	}{
		{"default", loadOptions{base: defaultBase}},
		{"keys, ontology, no document text", loadOptions{base: "http://kgrag.test/kg#", iris: "keys", withOntology: true, omitDocumentText: true}},
	}
	for name, dir := range dirs {
		for _, v := range variants {
			for _, turtle := range []bool{true, false} {
				if !turtle && v.opts.withOntology {
					continue
				}
				t.Run(name+"/"+v.name+"/"+map[bool]string{true: "turtle", false: "ntriples"}[turtle], func(t *testing.T) {
					opts := v.opts
					opts.input = dir
					out, summary, errs := loadBoth(t, opts, turtle)
					for i, err := range errs {
						if err != nil {
							t.Fatalf("load (serial=%v): %v", i == 0, err)
						}
					}
					if len(out[0]) == 0 || !bytes.Equal(out[0], out[1]) {
						t.Errorf("concurrent output (%d bytes) differs from the serial one (%d bytes)%s", len(out[1]), len(out[0]), firstDiff(out[0], out[1]))
					}
					if summary[0] != summary[1] {
						t.Errorf("concurrent summary\n%s\nwant the serial one\n%s", summary[1], summary[0])
					}
				})
			}
		}
	}
}

// firstDiff describes where a and b first differ.
func firstDiff(a, b []byte) string {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			lo := max(0, i-80)
			return "\nat byte " + strconv.Itoa(i) + ":\nserial:     " + string(a[lo:min(len(a), i+80)]) + "\nconcurrent: " + string(b[lo:min(len(b), i+80)])
		}
	}
	return ""
}

// writeSynthetic writes a synthetic 3.x set, changed by edit, into a new
// folder: a fixture with many batches per table.
func writeSynthetic(t *testing.T, edit func(ds *graphrag.Dataset)) string {
	t.Helper()
	ds := synth.Generate(3, synth.Sizes{Entities: 2000, Relationships: 6000, TextUnits: 400, Communities: 400})
	edit(ds)
	dir := t.TempDir()
	if err := graphrag.Write3x(context.Background(), dir, ds); err != nil {
		t.Fatal(err)
	}
	return dir
}

// damageMiddle overwrites the middle of a table's file, past its header and
// before its footer, so that the link pass may pass and the read of the
// whole table fails.
func damageMiddle(t *testing.T, dir, file string) {
	t.Helper()
	p := filepath.Join(dir, file)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(b) / 3; i < len(b)/2; i++ {
		b[i] = 0xff
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestLoadConcurrentSameErrors: a table that cannot be read while earlier
// ones are being written fails the concurrent path with the serial path's
// error, and no file is left behind. (Rows that fail in the mapping, which
// parquet cannot hold, are tested in internal/convert.)
func TestLoadConcurrentSameErrors(t *testing.T) {
	tests := []struct {
		name  string
		input func(t *testing.T) string
		want  string // in the serial error, so that the fixture fails as meant
	}{
		{"a table that cannot be read after good ones", func(t *testing.T) string {
			dir := writeSynthetic(t, func(*graphrag.Dataset) {})
			damageMiddle(t, dir, "covariates.parquet")
			return dir
		}, "covariates.parquet"},
	}
	for _, tt := range tests {
		for _, turtle := range []bool{true, false} {
			t.Run(tt.name+map[bool]string{true: "/turtle", false: "/ntriples"}[turtle], func(t *testing.T) {
				out, _, errs := loadBoth(t, loadOptions{input: tt.input(t), base: defaultBase, quiet: true}, turtle)
				if errs[0] == nil || !strings.Contains(errs[0].Error(), tt.want) {
					t.Fatalf("serial load: %v; want an error mentioning %s", errs[0], tt.want)
				}
				if errs[1] == nil || errs[1].Error() != errs[0].Error() {
					t.Errorf("concurrent load: %v\nwant the serial error: %v", errs[1], errs[0])
				}
				if out[1] != nil {
					t.Errorf("concurrent load left %d bytes behind", len(out[1]))
				}
			})
		}
	}
}
