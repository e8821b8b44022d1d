package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// multihopRun is one kgrag eval run of the multihop step: a mode with its
// flags, at a budget ("" its default).
type multihopRun struct {
	Label  string   `json:"label"`
	Mode   string   `json:"mode"`
	Args   []string `json:"args,omitempty"`
	Budget string   `json:"budget"`
	// Figures from kgrag eval --json; nil where the mode has none.
	Recall    float64  `json:"context_recall"`
	RecallAt2 *float64 `json:"recall_at_2"`
	RecallAt5 *float64 `json:"recall_at_5"`
	Tokens    float64  `json:"mean_context_tokens"`
	P50MS     float64  `json:"p50_ms"`
	Failed    int      `json:"failed"`
	Note      string   `json:"note,omitempty"`
}

type multihopResult struct {
	Set        string        `json:"set"`
	EmbedModel string        `json:"embed_model"`
	Runs       []multihopRun `json:"runs"`
	// BM25 is rank_bm25's recall@2 and @5 (scripts/oracle/bm25_recall.py).
	BM25 map[string]float64 `json:"bm25_py,omitempty"`
	// RankMS is the median time of BenchmarkRank (one question's walk
	// over 100,000 entities); RankNote why there is none.
	RankMS   float64  `json:"walk_100k_ms,omitempty"`
	RankNote string   `json:"walk_100k_note,omitempty"`
	Notes    []string `json:"notes,omitempty"`
}

// multihopModes are the runs of the step at each budget: every mode that
// builds a context without a chat model, and basic search's other
// retrievers with room for the budget.
func multihopModes() []multihopRun {
	k20 := []string{"--top-k-text-units", "20"}
	return []multihopRun{
		{Label: "basic (GraphRAG's)", Mode: "basic"},
		{Label: "basic, vector by rank, k 20", Mode: "basic", Args: append([]string{"--basic-retriever", "vector"}, k20...)},
		{Label: "basic, BM25, k 20", Mode: "basic", Args: append([]string{"--basic-retriever", "bm25"}, k20...)},
		{Label: "basic, hybrid (RRF), k 20", Mode: "basic", Args: append([]string{"--basic-retriever", "hybrid"}, k20...)},
		{Label: "local", Mode: "local"},
		{Label: "local, --entity-retriever hybrid", Mode: "local", Args: []string{"--entity-retriever", "hybrid"}},
		{Label: "subgraph", Mode: "subgraph"},
		{Label: "subgraph, --entity-retriever hybrid", Mode: "subgraph", Args: []string{"--entity-retriever", "hybrid"}},
		{Label: "sparql-templates", Mode: "sparql-templates"},
		{Label: "walk", Mode: "walk"},
	}
}

// multihop runs HotpotQA-100 (../shared/testdata/multihop) through every
// mode over a fast graph built with no model and embedded by the real
// all-MiniLM-L6-v2 (scripts/models.sh), at 1,200 tokens and at each
// mode's default budget, beside rank_bm25 and the papers' figures.
func (b *bench) multihop(ctx context.Context) (string, any, error) {
	dir := filepath.Join(b.cfg.TestData, "multihop", "hotpotqa-100")
	questions, corpus := filepath.Join(dir, "questions.json"), filepath.Join(dir, "corpus.json")
	res := multihopResult{Set: dir}
	if _, err := os.Stat(questions); err != nil {
		res.Notes = append(res.Notes, "not run: "+err.Error())
		return multihopSection(res), res, nil
	}
	models := filepath.Join(b.repo, "scripts", "models.sh")
	envFile := b.runFile("multihop-models.env")
	env := []string{"KGRAG_MODELS_ENV=" + envFile, "KGRAG_MODELS_DIR=" + b.runFile("multihop-models")}
	port := fmt.Sprint(b.cfg.MultihopPort)
	u, err := b.measure(ctx, "multihop-models", env, "bash", models, "start", "--port", port)
	if err != nil {
		return "", nil, err
	}
	if u.RC != 0 {
		res.Notes = append(res.Notes, "not run: the model server did not start: "+b.why("multihop-models", u.RC))
		return multihopSection(res), res, nil
	}
	defer b.measure(context.WithoutCancel(ctx), "multihop-models-stop", env, "bash", models, "stop", "--port", port) //nolint:errcheck
	url := "http://127.0.0.1:" + port + "/v1"
	res.EmbedModel = "all-minilm-l6-v2"
	docs, out := filepath.Join(b.out, "multihop", "docs"), filepath.Join(b.out, "multihop", "output")
	if err := os.RemoveAll(filepath.Join(b.out, "multihop")); err != nil {
		return "", nil, err
	}
	server := []string{"--llm-url", url, "--embed-model", res.EmbedModel}
	set := []string{"--questions", questions, "--corpus", corpus}
	prep := []struct {
		tag  string
		args []string
	}{
		{"multihop-documents", append([]string{"eval", "--write-documents", docs}, set...)},
		{"multihop-index", []string{"index", "-q", "--input", docs, "--output", out, "--method", "fast", "--reports", "none", "--title-column", "title"}},
		{"multihop-embed", append([]string{"embed", "-q", "--input", out, "--tables", "entities,text_units"}, server...)},
	}
	for _, s := range prep {
		u, err := b.measure(ctx, s.tag, nil, b.kgrag, s.args...)
		if err != nil {
			return "", nil, err
		}
		if u.RC != 0 {
			res.Notes = append(res.Notes, s.tag+" failed: "+b.why(s.tag, u.RC))
			return multihopSection(res), res, nil
		}
	}
	for _, budget := range []string{"1200", ""} {
		for i, r := range multihopModes() {
			r.Budget = budget
			args := append([]string{"eval", "-q", "--input", out, "--json", "--modes", r.Mode}, set...)
			args = append(append(args, server...), r.Args...)
			if budget != "" {
				args = append(args, "--max-context-tokens", budget)
			}
			tag := fmt.Sprintf("multihop-eval-%d-%s", i, cmpOr(budget, "default"))
			u, err := b.measure(ctx, tag, nil, b.kgrag, args...)
			if err != nil {
				return "", nil, err
			}
			if u.RC != 0 {
				r.Note = "failed: " + b.why(tag, u.RC)
			} else if err := readMultihopRun(b.runFile(tag+".out"), &r); err != nil {
				return "", nil, err
			}
			res.Runs = append(res.Runs, r)
		}
	}
	if res.RankNote, err = b.goBench(ctx, "multihop-walk-bench", nil, "-bench", "^BenchmarkRank$", "-count", fmt.Sprint(b.cfg.Count), "./internal/walksearch/"); err != nil {
		return "", nil, err
	}
	if res.RankNote == "" {
		res.RankMS, res.RankNote = medianNsOp(b.runFile("multihop-walk-bench.txt"))
	}
	if py, err := b.output(ctx, b.runFile("bm25-py.err"), "bash", filepath.Join(b.repo, "scripts", "bm25-py.sh")); err != nil {
		res.Notes = append(res.Notes, "rank_bm25 not run: "+lastLine(b.runFile("bm25-py.err"), 160))
	} else {
		raw, err := b.output(ctx, b.runFile("bm25-recall.err"), strings.TrimSpace(py), filepath.Join(b.repo, "scripts", "oracle", "bm25_recall.py"), questions, corpus)
		if err == nil {
			err = json.Unmarshal([]byte(raw), &res.BM25)
		}
		if err != nil {
			res.Notes = append(res.Notes, "rank_bm25 failed: "+lastLine(b.runFile("bm25-recall.err"), 160))
		}
	}
	return multihopSection(res), res, nil
}

// medianNsOp is the median ns/op of a go test -bench output, in
// milliseconds.
func medianNsOp(path string) (float64, string) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0, err.Error()
	}
	var ns []float64
	for _, line := range strings.Split(string(raw), "\n") {
		fs := strings.Fields(line)
		for i := 1; i < len(fs); i++ {
			if fs[i] == "ns/op" {
				var v float64
				if _, err := fmt.Sscan(fs[i-1], &v); err == nil {
					ns = append(ns, v)
				}
			}
		}
	}
	if len(ns) == 0 {
		return 0, "no ns/op in " + filepath.Base(path)
	}
	slices.Sort(ns)
	return ns[len(ns)/2] / 1e6, ""
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// readMultihopRun fills r from a kgrag eval --json report of one mode.
func readMultihopRun(path string, r *multihopRun) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var rep struct {
		Modes []struct {
			Summary struct {
				Recall    float64  `json:"context_recall"`
				RecallAt2 *float64 `json:"recall_at_2"`
				RecallAt5 *float64 `json:"recall_at_5"`
				Tokens    float64  `json:"mean_context_tokens"`
				P50MS     float64  `json:"p50_ms"`
				Failed    int      `json:"failed"`
			} `json:"summary"`
		} `json:"modes"`
		Skipped map[string]string `json:"skipped"`
	}
	if err := json.Unmarshal(raw, &rep); err != nil {
		return fmt.Errorf("multihop: kgrag eval --json: %w", err)
	}
	if len(rep.Modes) != 1 {
		r.Note = fmt.Sprintf("skipped: %v", rep.Skipped)
		return nil
	}
	s := rep.Modes[0].Summary
	r.Recall, r.RecallAt2, r.RecallAt5, r.Tokens, r.P50MS, r.Failed = s.Recall, s.RecallAt2, s.RecallAt5, s.Tokens, s.P50MS, s.Failed
	return nil
}

func multihopSection(res multihopResult) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, `## 16. Multi-hop retrieval: HotpotQA-100

The 100 HotpotQA questions and 994 passages of %s (each passage one
document), a fast graph of them built with no model (kgrag index --method fast --reports none, --prune auto:
light on these short passages), entities and text units embedded by %s. Context recall: the share of
each question's 2 gold passages the context holds; R@2, R@5: the share among the first 2 and 5 text units the mode
ranked (the papers' measure; only the modes that rank text units have it). Each mode at 1,200 tokens and at its
default budget (12,000; basic's k 10 and subgraph's and sparql-templates' own sizes keep them smaller).

| mode | budget | context recall | R@2 | R@5 | mean context tokens | p50 ms | failed |
|---|---|---|---|---|---|---|---|
`, res.Set, cmpOr(res.EmbedModel, "the real embedder"))
	opt := func(v *float64) string {
		if v == nil {
			return "-"
		}
		return f(*v, 3)
	}
	for _, r := range res.Runs {
		budget := cmpOr(r.Budget, "default")
		if r.Note != "" {
			sb.WriteString(row(r.Label, budget, r.Note, "", "", "", "", ""))
			continue
		}
		sb.WriteString(row(r.Label, budget, f(r.Recall, 3), opt(r.RecallAt2), opt(r.RecallAt5), f(r.Tokens, 0), f(r.P50MS, 1), fmt.Sprint(r.Failed)))
	}
	if res.BM25 != nil {
		sb.WriteString(row("rank_bm25 (Python, BM25Okapi)", "-", "-", f(res.BM25["recall_at_2"], 3), f(res.BM25["recall_at_5"], 3), "-", "-", "-"))
	}
	sb.WriteString(`
The papers' recall@5 on the full HotpotQA test set (1,000 questions; not these 100, so a scale, not a target):
BM25 72.2, Contriever 75.5, ColBERTv2 79.3, HippoRAG with Contriever 76.2 (HippoRAG, NeurIPS 2024, Table 2);
HippoRAG 2 with NV-Embed-v2 (7B) 96.3 (ICML 2025).
`)
	if res.RankNote != "" {
		sb.WriteString("\nThe walk at scale: " + res.RankNote + "\n")
	} else if res.RankMS > 0 {
		fmt.Fprintf(&sb, "\nThe walk at scale (BenchmarkRank, internal/walksearch): one question's personalized PageRank over a random graph of\n"+
			"100,000 entities, 20,000 text units and 300,000 relationships takes %.0f ms (median), once the graph is read.\n", res.RankMS)
	}
	for _, n := range res.Notes {
		sb.WriteString("\n" + n + "\n")
	}
	return sb.String()
}
