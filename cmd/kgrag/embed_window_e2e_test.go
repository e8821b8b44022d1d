package main

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/test"
)

// sentenceEnd splits prose into sentences.
var sentenceEnd = regexp.MustCompile(`[.!?]['"]?\s+`)

// lastThirdSentence is the first sentence of 18 words or more that starts
// after the first 70% of text: what only its last third holds.
func lastThirdSentence(text string) string {
	tail := text[len(text)*7/10:]
	for _, s := range sentenceEnd.Split(tail, -1)[1:] { // the first is cut
		if s = strings.TrimSpace(s); len(strings.Fields(s)) >= 18 {
			return s
		}
	}
	return ""
}

// TestEmbedWindowsFindLastThird: all-MiniLM-L6-v2 reads 512 of its
// tokens, about 490 of tiktoken's, and the server cuts the rest silently.
// Each text unit of the v3 sample is 1,200 tokens; a sentence from the
// last third of one must find it by basic search (top 3 of 42). Embedded
// whole (what the server reads: the head), few are found; embedded in
// windows, nearly all. kgrag embed must also have measured the window
// near 490 tokens.
func TestEmbedWindowsFindLastThird(t *testing.T) {
	url, _, embedModel := modelServer(t)
	input := filepath.Join(test.GraphRAGSamples(t), "v3")
	ds, err := graphrag.Open(t.Context(), input)
	if err != nil {
		t.Fatal(err)
	}
	server := []string{"--llm-url", url, "--embed-model", embedModel}
	windowed, whole := t.TempDir(), t.TempDir()
	_, stderr, code := runKgrag(t, append([]string{"embed", "--input", input, "--index", windowed, "--tables", "text_units", "--snapshot=false"}, server...)...)
	if code != 0 {
		t.Fatalf("kgrag embed: exit %d: %s", code, stderr)
	}
	t.Logf("kgrag embed: %s", stderr)
	m := regexp.MustCompile(`embedding window of \S+: (\d+) cl100k_base tokens`).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("kgrag embed did not say the window it measured: %s", stderr)
	}
	if n := atoiOr(m[1]); n < 400 || n > 520 {
		t.Errorf("measured window %d cl100k_base tokens; want about 490 (MiniLM reads 512 of its own)", n)
	}
	// The control: one vector per unit, which the server cuts to the
	// head. A window the flag says is longer than any unit splits none.
	_, stderr, code = runKgrag(t, append([]string{"embed", "-q", "--input", input, "--index", whole, "--tables", "text_units", "--snapshot=false",
		"--embed-max-tokens", "100000"}, server...)...)
	if code != 0 {
		t.Fatalf("kgrag embed --embed-max-tokens 100000: exit %d: %s", code, stderr)
	}
	found := map[string]int{}
	units := 0
	for _, u := range ds.TextUnits {
		q := lastThirdSentence(u.Text)
		if u.NTokens < 1100 || q == "" {
			continue
		}
		units++
		for _, idx := range []string{windowed, whole} {
			stdout, stderr, code := runKgrag(t, append([]string{"ask", "--mode", "basic", "--context-only", "--json", "--top-k-text-units", "3",
				"--input", input, "--index", idx, q}, server...)...)
			if code != 0 {
				t.Fatalf("kgrag ask --mode basic: exit %d: %s", code, stderr)
			}
			var res struct {
				Context struct {
					Records struct {
						Sources []struct {
							TextUnitID string `json:"text_unit_id"`
						} `json:"sources"`
					} `json:"records"`
				} `json:"context"`
			}
			if err := json.Unmarshal([]byte(stdout), &res); err != nil {
				t.Fatal(err)
			}
			for _, s := range res.Context.Records.Sources {
				if s.TextUnitID == u.ID {
					found[idx]++
				}
			}
		}
	}
	t.Logf("a last-third sentence finds its 1,200-token text unit in the top 3: %d of %d embedded in windows, %d of %d embedded whole",
		found[windowed], units, found[whole], units)
	if units < 30 {
		t.Fatalf("only %d text units of 1,100 tokens or more with a long sentence in their last third; want the sample's 40", units)
	}
	if float64(found[windowed]) < 0.8*float64(units) {
		t.Errorf("embedded in windows, %d of %d units found by a sentence of their last third; want 80%% or more", found[windowed], units)
	}
	if found[whole] >= found[windowed] || float64(found[whole]) > 0.6*float64(units) {
		t.Errorf("embedded whole (the server reads the head), %d of %d found; want far fewer than in windows (%d): the test would not tell them apart",
			found[whole], units, found[windowed])
	}
}

func atoiOr(s string) int {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + int(c-'0')
	}
	return n
}
