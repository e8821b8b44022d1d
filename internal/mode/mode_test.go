package mode_test

import (
	"testing"

	"github.com/kgrag/kgrag/internal/mode"
)

func TestLookup(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"local", mode.Local, true},
		{"kgrag-local", mode.Local, true},
		{"seed", mode.SPARQLTemplates, true},
		{"kgrag-seed", mode.SPARQLTemplates, true},
		{"kgrag-sparql-templates", mode.SPARQLTemplates, true},
		{"drift", mode.Drift, true},
		{"kgrag-basic", mode.Basic, true},
		{"Local", "", false},
		{"kgrag-", "", false},
		{"", "", false},
		{"gpt-4o", "", false},
	}
	for _, tt := range tests {
		m, ok := mode.Lookup(tt.in)
		if ok != tt.ok || m.Name != tt.want {
			t.Errorf("Lookup(%q) = %q, %v; want %q, %v", tt.in, m.Name, ok, tt.want, tt.ok)
		}
	}
}

// TestAll: names and model names are unique, and every mode says what it
// does and reads.
func TestAll(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range mode.All() {
		for _, n := range append([]string{m.Name, m.Model()}, m.Aliases...) {
			if seen[n] {
				t.Errorf("name %q twice", n)
			}
			seen[n] = true
		}
		if m.About == "" || m.Needs == 0 {
			t.Errorf("mode %s: About %q, Needs %b; want both", m.Name, m.About, m.Needs)
		}
	}
	names := mode.Names()
	for i, m := range mode.All() {
		if i >= len(names) || names[i] != m.Name {
			t.Errorf("Names() = %q; want All()'s names in order", names)
			break
		}
	}
}

func TestCanonical(t *testing.T) {
	for in, want := range map[string]string{
		"seed":             mode.SPARQLTemplates,
		"sparql-templates": mode.SPARQLTemplates,
		"local":            mode.Local,
		"kgrag-seed":       "kgrag-seed", // a model name, not a --mode value
		"nonsense":         "nonsense",
	} {
		if got := mode.Canonical(in); got != want {
			t.Errorf("Canonical(%q) = %q; want %q", in, got, want)
		}
	}
}
