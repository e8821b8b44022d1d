package answer

import (
	"encoding"
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/internal/driftsearch"
	"github.com/kgrag/kgrag/internal/globalsearch"
)

// TestResultShape: every field name the record can hold, at every depth,
// is the list in testdata/result-fields.txt, which is the contract with
// the scripts and clients that read `kgrag ask --json` and serve's
// /api/ask. A field renamed or dropped fails here; a field added must be
// added to the list too, by hand, so that it is a decision. Plan holds a
// global or a DRIFT plan (an interface field), listed under "plan
// (global)" and "plan (drift)".
func TestResultShape(t *testing.T) {
	var got []string
	walkShape(reflect.TypeOf(Result{}), "", map[reflect.Type]bool{}, &got)
	walkShape(reflect.TypeOf(globalsearch.Plan{}), "plan (global)", map[reflect.Type]bool{}, &got)
	walkShape(reflect.TypeOf(driftsearch.Plan{}), "plan (drift)", map[reflect.Type]bool{}, &got)
	slices.Sort(got)
	got = slices.Compact(got)

	b, err := os.ReadFile("testdata/result-fields.txt")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			want = append(want, l)
		}
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("field %s is gone from the record (renamed or dropped): clients read it", w)
		}
	}
	for _, g := range got {
		if !slices.Contains(want, g) {
			t.Errorf("field %s is new: add it to testdata/result-fields.txt", g)
		}
	}
}

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// walkShape appends to out the JSON paths of t under prefix, as
// encoding/json names them: "a.b" for a field of an object, "a[]" for the
// elements of an array, "a{}" for the values of a map. A type met again
// on the same path (a recursive type) and a type with its own marshaller
// end the path.
func walkShape(t reflect.Type, prefix string, seen map[reflect.Type]bool, out *[]string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType) ||
		t.Implements(textMarshalerType) || reflect.PointerTo(t).Implements(textMarshalerType) {
		return
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return // []byte is a string
		}
		*out = append(*out, prefix+"[]")
		walkShape(t.Elem(), prefix+"[]", seen, out)
	case reflect.Map:
		*out = append(*out, prefix+"{}")
		walkShape(t.Elem(), prefix+"{}", seen, out)
	case reflect.Struct:
		if seen[t] {
			return
		}
		seen[t] = true
		defer delete(seen, t)
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" || (!f.IsExported() && !f.Anonymous) {
				continue
			}
			if f.Anonymous && name == "" {
				walkShape(f.Type, prefix, seen, out) // embedded: its fields are ours
				continue
			}
			if name == "" {
				name = f.Name
			}
			p := name
			if prefix != "" {
				p = prefix + "." + name
			}
			*out = append(*out, p)
			walkShape(f.Type, p, seen, out)
		}
	}
}
