package main

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/internal/mode"
)

// notServedYet are the registry's modes kgrag serve does not answer yet
// (their engines are wired in kgrag ask alone). TestModesEverywhere fails
// when one of them is served, so that the list shrinks with the gap.
var notServedYet = []string{mode.Drift, mode.Basic}

// TestModesEverywhere: every mode of the registry (internal/mode) is
// described in kgrag ask --help, taken by --mode, and listed by kgrag
// serve's /v1/models (through go-openai) and taken as a model name by
// /v1/chat/completions, but for notServedYet; and nothing is offered that
// the registry lacks.
func TestModesEverywhere(t *testing.T) {
	help, _, code := runKgrag(t, "ask", "--help")
	if code != 0 {
		t.Fatalf("ask --help: exit %d", code)
	}
	f := newAskFixture(t)
	sf := startServe(t, f, nil)
	list, err := sf.openaiClient("").ListModels(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var served []string
	for _, m := range list.Models {
		served = append(served, m.ID)
	}
	for _, m := range mode.All() {
		if !regexp.MustCompile(`(?m)^ {3,8}` + regexp.QuoteMeta(m.Name) + `\s`).MatchString(help) {
			t.Errorf("ask --help does not describe mode %s", m.Name)
		}
		opts := f.options("Who is Scrooge?")
		opts.mode = m.Name
		if err := opts.validate(); err != nil && strings.Contains(err.Error(), "--mode must be one of") {
			t.Errorf("ask --mode %s: %v", m.Name, err)
		}
		want := !slices.Contains(notServedYet, m.Name)
		if got := slices.Contains(served, m.Model()); got != want {
			t.Errorf("serve lists %s: %v; want %v", m.Model(), got, want)
		}
	}
	for _, id := range served {
		if _, ok := mode.Lookup(id); !ok {
			t.Errorf("serve lists %s, which the registry lacks", id)
		}
	}
}
