package rdfenc_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/internal/test"
	"github.com/kgrag/kgrag/rdf"
	"github.com/kgrag/kgrag/rdfenc"
)

// TestExternalParsers writes every fuzz seed and corpus entry as Turtle
// and as N-Triples, validates both files with scripts/validate-rdf.sh
// (Jena riot and Oxigraph: no error, no warning) and checks that Oxigraph
// reads back exactly the triples written. It runs only with
// KGRAG_EXTERNAL=1; it needs java, curl (first run) and python3. Missing
// tools skip the test, or fail it under KGRAG_TEST_DISALLOW_SKIP=1.
func TestExternalParsers(t *testing.T) {
	if os.Getenv("KGRAG_EXTERNAL") != "1" {
		t.Skip("set KGRAG_EXTERNAL=1 to run Jena riot and Oxigraph")
	}
	for _, tool := range []string{"java", "python3", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			test.SkipOrFail(t, "%s not found: %v", tool, err)
		}
	}
	scripts, err := filepath.Abs(filepath.Join("..", "scripts"))
	if err != nil {
		t.Fatal(err)
	}

	inputs := fuzzSeeds()
	for _, name := range []string{"FuzzNTriplesRoundTrip", "FuzzTurtleRoundTrip"} {
		in, err := readFuzzCorpus(filepath.Join("testdata", "fuzz", name))
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, in...)
	}
	t.Logf("%d fuzz inputs", len(inputs))

	dir := t.TempDir()
	ttlPath, ntPath := filepath.Join(dir, "corpus.ttl"), filepath.Join(dir, "corpus.nt")
	var ttl, nt bytes.Buffer
	te := rdfenc.NewTurtle(&ttl, fuzzPrefixes)
	ne := rdfenc.NewNTriples(&nt)
	var wantTTL, wantNT []rdf.Triple
	for _, in := range inputs {
		cs := fuzzCases(in)
		wantTTL = append(wantTTL, encodeCases(t, te, cs)...)
		wantNT = append(wantNT, encodeCases(t, ne, cs)...)
	}
	if err := te.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ne.Flush(); err != nil {
		t.Fatal(err)
	}
	for path, data := range map[string][]byte{ttlPath: ttl.Bytes(), ntPath: nt.Bytes()} {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	cmd := exec.Command("bash", filepath.Join(scripts, "validate-rdf.sh"), ttlPath, ntPath)
	if out, err := cmd.CombinedOutput(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 3 && !test.DisallowSkip() {
			t.Skipf("validate-rdf.sh could not set up a parser:\n%s", out)
		}
		t.Fatalf("validate-rdf.sh: %v\n%s", err, out)
	}

	for _, f := range []struct {
		path string
		want []rdf.Triple
	}{{ttlPath, wantTTL}, {ntPath, wantNT}} {
		got, err := oxigraphTriples(filepath.Join(scripts, "rdf2json.py"), f.path)
		if err != nil {
			t.Fatal(err)
		}
		// Oxigraph reports language tags in lower case; tags compare
		// case-insensitively in RDF.
		want := make([]rdf.Triple, len(f.want))
		for i, tr := range f.want {
			tr.O.Lang = strings.ToLower(tr.O.Lang)
			want[i] = tr
		}
		compareTriples(t, "oxigraph "+filepath.Base(f.path), got, want)
	}
}

type jsonTerm struct {
	Kind, Value, Datatype, Lang string
}

func (j jsonTerm) term() rdf.Term {
	switch j.Kind {
	case "iri":
		return rdf.IRI(j.Value)
	case "blank":
		return rdf.Blank(j.Value)
	}
	if j.Lang != "" {
		return rdf.LangString(j.Value, j.Lang)
	}
	return rdf.Typed(j.Value, j.Datatype)
}

// oxigraphTriples parses path with pyoxigraph through rdf2json.py.
func oxigraphTriples(script, path string) ([]rdf.Triple, error) {
	var stderr bytes.Buffer
	cmd := exec.Command("python3", script, path)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("rdf2json.py %s: %w\n%s", path, err, stderr.Bytes())
	}
	var raw []struct{ S, P, O jsonTerm }
	if err := json.Unmarshal(out, &raw); err != nil {
		return nil, fmt.Errorf("rdf2json.py %s: decode output: %w", path, err)
	}
	ts := make([]rdf.Triple, len(raw))
	for i, r := range raw {
		ts[i] = rdf.Triple{S: r.S.term(), P: r.P.term(), O: r.O.term()}
	}
	return ts, nil
}

// readFuzzCorpus reads the "go test fuzz v1" files in dir. A missing dir
// gives no inputs.
func readFuzzCorpus(dir string) ([]fuzzInput, error) {
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read fuzz corpus: %w", err)
	}
	var out []fuzzInput
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("read fuzz corpus: %w", err)
		}
		in, err := parseFuzzFile(data)
		if err != nil {
			return nil, fmt.Errorf("read fuzz corpus %s: %w", path, err)
		}
		out = append(out, in)
	}
	return out, nil
}

// parseFuzzFile decodes one corpus file for the (string, string, string,
// int64, float64) fuzz targets.
func parseFuzzFile(data []byte) (fuzzInput, error) {
	var in fuzzInput
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<24)
	var vals []string
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "go test fuzz") {
			continue
		}
		vals = append(vals, line)
	}
	if err := sc.Err(); err != nil {
		return in, err
	}
	if len(vals) != 5 {
		return in, fmt.Errorf("have %d values; want 5", len(vals))
	}
	arg := func(v, typ string) (string, error) {
		if !strings.HasPrefix(v, typ+"(") || !strings.HasSuffix(v, ")") {
			return "", fmt.Errorf("value %q is not a %s", v, typ)
		}
		return v[len(typ)+1 : len(v)-1], nil
	}
	strs := []*string{&in.ID, &in.Value, &in.Lang}
	for i, p := range strs {
		a, err := arg(vals[i], "string")
		if err != nil {
			return in, err
		}
		if *p, err = strconv.Unquote(a); err != nil {
			return in, fmt.Errorf("value %q: %w", vals[i], err)
		}
	}
	a, err := arg(vals[3], "int64")
	if err != nil {
		return in, err
	}
	if in.N, err = strconv.ParseInt(a, 0, 64); err != nil {
		return in, fmt.Errorf("value %q: %w", vals[3], err)
	}
	if a, err = arg(vals[4], "float64"); err != nil {
		// Non-canonical NaNs are written as math.Float64frombits(0x...).
		bits, err2 := arg(vals[4], "math.Float64frombits")
		if err2 != nil {
			return in, err
		}
		u, err := strconv.ParseUint(bits, 0, 64)
		if err != nil {
			return in, fmt.Errorf("value %q: %w", vals[4], err)
		}
		in.X = math.Float64frombits(u)
		return in, nil
	}
	if in.X, err = strconv.ParseFloat(a, 64); err != nil {
		return in, fmt.Errorf("value %q: %w", vals[4], err)
	}
	return in, nil
}
