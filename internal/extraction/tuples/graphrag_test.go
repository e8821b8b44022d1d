package tuples_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"

	"github.com/kgrag/kgrag/internal/extraction/tuples"
	"github.com/kgrag/kgrag/internal/test"
)

// This file runs the corpus through GraphRAG's own record parsing (PyPI
// graphrag 3.3.0 in the venv of scripts/graphrag-py.sh):
// GraphExtractor._process_result for graph replies and
// ClaimExtractor._parse_claim_tuples for claims, called on objects made
// without a model. On the well-formed replies both must read the same; on
// the others kgrag must keep every entity and relationship GraphRAG keeps,
// but for those it drops on purpose (nameless entities, self-loops).

// graphragParse reads JSON lines {"kind": "graph"|"claims", "reply": ...}
// on stdin and prints, per line, what GraphRAG's parser made of the reply.
// The first line printed is GraphRAG's version.
const graphragParse = `
import json, math, os, sys
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
import logging
logging.disable(logging.WARNING)
from importlib.metadata import version
from graphrag.index.operations.extract_graph import graph_extractor as gx
from graphrag.index.operations.extract_covariates.claim_extractor import ClaimExtractor

graph = gx.GraphExtractor.__new__(gx.GraphExtractor)
claims = ClaimExtractor.__new__(ClaimExtractor)
print(json.dumps({"version": version("graphrag")}))
for line in sys.stdin:
    job = json.loads(line)
    if job["kind"] == "claims":
        out = {"claims": claims._parse_claim_tuples(job["reply"])}
    else:
        ents, rels = graph._process_result(job["reply"], "s", gx.TUPLE_DELIMITER, gx.RECORD_DELIMITER)
        out = {
            "entities": [{"title": e.title, "type": e.type, "description": e.description} for e in ents.itertuples()],
            "relationships": [
                {"source": r.source, "target": r.target, "description": r.description,
                 "weight": r.weight if math.isfinite(r.weight) else None}
                for r in rels.itertuples()
            ],
        }
    print(json.dumps(out), flush=True)
`

type grJob struct {
	Kind  string `json:"kind"`
	Reply string `json:"reply"`
}

type grRelationship struct {
	Source      string   `json:"source"`
	Target      string   `json:"target"`
	Description string   `json:"description"`
	Weight      *float64 `json:"weight"`
}

type grOut struct {
	Version       string                       `json:"version"`
	Entities      []tuples.Entity              `json:"entities"`
	Relationships []grRelationship             `json:"relationships"`
	Claims        []map[string]json.RawMessage `json:"claims"`
}

// runGraphRAG answers jobs with GraphRAG's parser, in one interpreter.
func runGraphRAG(t *testing.T, jobs []grJob) (string, []grOut) {
	t.Helper()
	py := test.GraphRAGPython(t)
	var in bytes.Buffer
	enc := json.NewEncoder(&in)
	for _, j := range jobs {
		if err := enc.Encode(j); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(py, "-c", graphragParse)
	cmd.Stdin = &in
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("GraphRAG parser script: %v", err)
	}
	var res []grOut
	for dec := json.NewDecoder(bytes.NewReader(out)); dec.More(); {
		var o grOut
		if err := dec.Decode(&o); err != nil {
			t.Fatalf("GraphRAG parser script output: %v", err)
		}
		res = append(res, o)
	}
	if len(res) != len(jobs)+1 {
		t.Fatalf("GraphRAG parser script answered %d of %d jobs", len(res)-1, len(jobs))
	}
	return res[0].Version, res[1:]
}

// htmlEntities are references a model may copy from HTML text: named,
// numeric, without the semicolon, unknown, out of range.
var htmlEntities = []string{"&amp;", "&amp", "&lt;b&gt;", "&quot;x&quot;", "&#39;", "&#x27;", "&nbsp;", "&copy",
	"&notit;", "&notin;", "&#0;", "&#x80;", "&#x110000;", "&#65", "&AMP;", "&Eacute;", "&eacute", "&frac12;",
	"&#xD800;", "&bogus;", "& ", "&&amp;", "&#;", "&NotEqualTilde;", "&acE;", "&#128512;", "&#x9F;", "&#1;"}

// letterNames are entity names made of every Unicode letter, 40 to a
// name, to check kgrag's upper-casing against Python's str.upper.
func letterNames() []string {
	var names []string
	var cur []rune
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if !unicode.IsLetter(r) {
			continue
		}
		if cur = append(cur, r); len(cur) == 40 {
			names = append(names, string(cur))
			cur = cur[:0]
		}
	}
	return append(names, string(cur))
}

func TestGraphRAGDifferential(t *testing.T) {
	files := readCorpus(t)
	var jobs []grJob
	for _, f := range files {
		kind := "graph"
		if f.claims {
			kind = "claims"
		}
		jobs = append(jobs, grJob{Kind: kind, Reply: f.reply})
	}
	// Every letter, upper-cased by both.
	names := letterNames()
	var letters strings.Builder
	for _, n := range names {
		fmt.Fprintf(&letters, "(\"entity\"<|>%s<|>%s<|>d)##", n, n)
	}
	jobs = append(jobs, grJob{Kind: "graph", Reply: letters.String()})

	// HTML entities in descriptions, unescaped by both (Python's
	// html.unescape and Go's html.UnescapeString differ on "&#x;", which
	// is left out).
	var entities strings.Builder
	for i, e := range htmlEntities {
		fmt.Fprintf(&entities, "(\"entity\"<|>E%d<|>T<|>a %s b)##", i, e)
	}
	jobs = append(jobs, grJob{Kind: "graph", Reply: entities.String()})

	version, outs := runGraphRAG(t, jobs)
	t.Logf("GraphRAG %s", version)

	t.Run("html entities", func(t *testing.T) {
		gr := outs[len(outs)-1]
		res := tuples.ParseGraph(entities.String(), tuples.Delimiters{})
		if diff := cmp.Diff(gr.Entities, res.Entities); diff != "" {
			t.Errorf("entities (-GraphRAG +kgrag):\n%s", diff)
		}
	})
	outs = outs[:len(outs)-1]

	t.Run("letters", func(t *testing.T) {
		gr := outs[len(outs)-1]
		res := tuples.ParseGraph(letters.String(), tuples.Delimiters{})
		if len(gr.Entities) != len(names) || len(res.Entities) != len(names) {
			t.Fatalf("%d names: GraphRAG read %d, kgrag %d", len(names), len(gr.Entities), len(res.Entities))
		}
		bad := 0
		for i, e := range res.Entities {
			if g := gr.Entities[i]; e.Title != g.Title || e.Type != g.Type {
				bad++
				if bad <= 10 {
					t.Errorf("upper(%q): kgrag %q, GraphRAG (Python str.upper) %q", names[i], e.Title, g.Title)
				}
			}
		}
		t.Logf("%d names of 40 letters upper-cased alike", len(names)-bad)
	})

	var table strings.Builder
	fmt.Fprintf(&table, "%-34s %11s %11s  %s\n", "reply", "GraphRAG", "kgrag", "weights (GraphRAG -> kgrag) where they differ")
	for i, f := range files {
		gr := outs[i]
		if f.claims {
			claimsDiff(t, f, gr, &table)
			continue
		}
		res := tuples.ParseGraph(f.reply, tuples.DefaultDelimiters())
		if f.want.WellFormed {
			t.Run(f.name, func(t *testing.T) { sameGraph(t, gr, res) })
		} else {
			t.Run(f.name, func(t *testing.T) { keepsAtLeast(t, gr, res) })
		}
		fmt.Fprintf(&table, "%-34s %5dE %3dR %5dE %3dR  %s\n", f.name, len(gr.Entities), len(gr.Relationships),
			len(res.Entities), len(res.Relationships), weightDiffs(gr, res))
	}
	t.Logf("records kept (E entities, R relationships; claims as C):\n%s", table.String())
}

// sameGraph requires kgrag to read a well-formed reply as GraphRAG does.
func sameGraph(t *testing.T, gr grOut, res tuples.Result) {
	if diff := cmp.Diff(gr.Entities, res.Entities, emptyIsNil); diff != "" {
		t.Errorf("entities (-GraphRAG +kgrag):\n%s", diff)
	}
	var got []grRelationship
	for _, r := range res.Relationships {
		w := r.Weight
		got = append(got, grRelationship{Source: r.Source, Target: r.Target, Description: r.Description, Weight: &w})
	}
	if diff := cmp.Diff(gr.Relationships, got, emptyIsNil); diff != "" {
		t.Errorf("relationships (-GraphRAG +kgrag):\n%s", diff)
	}
}

// normTitle is kgrag's reading of a name GraphRAG kept, "" when kgrag
// would drop it.
func normTitle(s string) string {
	res := tuples.ParseGraph(`("entity"<|>`+s+`<|>T<|>d)`, tuples.Delimiters{})
	if len(res.Entities) != 1 {
		return ""
	}
	return res.Entities[0].Title
}

// keepsAtLeast requires kgrag to keep every entity and relationship
// GraphRAG kept from a malformed reply, by name as kgrag normalises it,
// but for nameless entities and relationships without both ends or to
// themselves, which kgrag drops on purpose.
func keepsAtLeast(t *testing.T, gr grOut, res tuples.Result) {
	titles := map[string]bool{}
	for _, e := range res.Entities {
		titles[e.Title] = true
	}
	for _, e := range gr.Entities {
		if n := normTitle(e.Title); n != "" && !titles[n] {
			t.Errorf("GraphRAG kept entity %q, kgrag has no %q", e.Title, n)
		}
	}
	ends := map[[2]string]bool{}
	for _, r := range res.Relationships {
		ends[[2]string{r.Source, r.Target}] = true
	}
	for _, r := range gr.Relationships {
		s, o := normTitle(r.Source), normTitle(r.Target)
		if s != "" && o != "" && s != o && !ends[[2]string{s, o}] {
			t.Errorf("GraphRAG kept relationship %q -> %q, kgrag has no %q -> %q", r.Source, r.Target, s, o)
		}
	}
}

// weightDiffs lists the relationships both kept whose weights differ.
func weightDiffs(gr grOut, res tuples.Result) string {
	var diffs []string
	for _, g := range gr.Relationships {
		s, o := normTitle(g.Source), normTitle(g.Target)
		for _, r := range res.Relationships {
			if r.Source == s && r.Target == o && (g.Weight == nil || *g.Weight != r.Weight) {
				gw := "NaN"
				if g.Weight != nil {
					gw = fmt.Sprint(*g.Weight)
				}
				diffs = append(diffs, fmt.Sprintf("%s->%s %s->%v", s, o, gw, r.Weight))
			}
		}
	}
	return strings.Join(diffs, ", ")
}

// claimsDiff compares claims: field by field on well-formed replies,
// counts only on the others, since GraphRAG keeps every piece between
// delimiters as a claim (a heading line becomes a subject).
func claimsDiff(t *testing.T, f corpusFile, gr grOut, table *strings.Builder) {
	res := tuples.ParseClaims(f.reply, tuples.DefaultDelimiters())
	fmt.Fprintf(table, "%-34s %10dC %10dC\n", f.name, len(gr.Claims), len(res.Claims))
	if !f.want.WellFormed {
		return
	}
	t.Run(f.name, func(t *testing.T) {
		var want []tuples.Claim
		for _, c := range gr.Claims {
			var fields [8]string
			for i, k := range [...]string{"subject_id", "object_id", "type", "status", "start_date", "end_date", "description", "source_text"} {
				if err := json.Unmarshal(c[k], &fields[i]); err != nil {
					t.Fatalf("GraphRAG claim %s: %v", k, err)
				}
			}
			want = append(want, tuples.Claim{Subject: fields[0], Object: fields[1], Type: fields[2], Status: fields[3],
				StartDate: fields[4], EndDate: fields[5], Description: fields[6], SourceText: fields[7]})
		}
		if diff := cmp.Diff(want, res.Claims, emptyIsNil); diff != "" {
			t.Errorf("claims (-GraphRAG +kgrag):\n%s", diff)
		}
	})
}
