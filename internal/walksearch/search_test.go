package walksearch_test

import (
	"context"
	"hash/fnv"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kgrag/kgrag/embedindex"
	"github.com/kgrag/kgrag/embedindex/flat"
	"github.com/kgrag/kgrag/internal/lexical"
	"github.com/kgrag/kgrag/internal/retrieval"
	"github.com/kgrag/kgrag/internal/walksearch"
)

// words embeds a text as its terms hashed into 64 dimensions, normalized:
// texts that share words are near.
type words struct{}

func (words) Model() string { return "words" }

func (words) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, s := range texts {
		v := make([]float32, 64)
		for _, t := range lexical.Terms(s) {
			h := fnv.New32a()
			h.Write([]byte(t))
			v[h.Sum32()%64]++
		}
		var n float64
		for _, x := range v {
			n += float64(x * x)
		}
		for j := range v {
			if n > 0 {
				v[j] /= float32(math.Sqrt(n))
			}
		}
		out[i] = v
	}
	return out, nil
}

type loader struct{ g *retrieval.WalkGraph }

func (l loader) WalkGraph(context.Context) (*retrieval.WalkGraph, error) { return l.g, nil }

// companies is a two-hop corpus: the question names the widget, whose
// maker's founder is in another text unit that names the maker only.
// Text units 1 and 3 read alike, and 1 comes first in table order; only
// 3 is joined to the widget.
func companies() *retrieval.WalkGraph {
	texts := []string{
		"The Zephyr widget is made by Acme Corporation in Ohio.",
		"Bolt Industries was founded by John Doe in 1950.",
		"The Boreal gadget is made by Bolt Industries in Texas.",
		"Acme Corporation was founded by Jane Roe in 1950.",
		"Widgets and gadgets are small machines.",
	}
	ents := []struct {
		title string
		units []int32
	}{
		{"ZEPHYR WIDGET", []int32{0}}, {"ACME CORPORATION", []int32{0, 3}}, {"OHIO", []int32{0}},
		{"JANE ROE", []int32{3}}, {"BOREAL GADGET", []int32{2}}, {"BOLT INDUSTRIES", []int32{1, 2}},
		{"TEXAS", []int32{2}}, {"JOHN DOE", []int32{1}},
	}
	g := &retrieval.WalkGraph{Edges: make([][]retrieval.WalkEdge, len(ents))}
	for i, t := range texts {
		g.Units = append(g.Units, retrieval.WalkUnit{ID: string(rune('0' + i)), TextUnitID: "u" + string(rune('0'+i)), Text: t})
	}
	for i, e := range ents {
		g.Entities = append(g.Entities, retrieval.WalkEntity{ID: "e" + string(rune('0'+i)), HumanReadableID: string(rune('0' + i)), Title: e.title, Units: e.units})
		for _, u := range e.units {
			g.Units[u].Entities = append(g.Units[u].Entities, int32(i))
		}
	}
	return g
}

func indexes(t *testing.T, g *retrieval.WalkGraph) (ents, units embedindex.Index) {
	t.Helper()
	ctx := t.Context()
	write := func(name string, ids, texts []string) embedindex.Index {
		vecs, _ := words{}.Embed(ctx, texts)
		path := filepath.Join(t.TempDir(), name)
		if err := flat.Write(ctx, path, "words", ids, vecs); err != nil {
			t.Fatal(err)
		}
		idx, err := flat.Open(ctx, path, flat.Options{Exact: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { idx.Close() })
		return idx
	}
	var eids, etexts, uids, utexts []string
	for _, e := range g.Entities {
		eids, etexts = append(eids, e.ID), append(etexts, e.Title)
	}
	for _, u := range g.Units {
		uids, utexts = append(uids, u.TextUnitID), append(utexts, u.Text)
	}
	return write("entities.vec", eids, etexts), write("units.vec", uids, utexts)
}

func TestWalkFindsTheSecondHop(t *testing.T) {
	g := companies()
	ents, units := indexes(t, g)
	s, err := walksearch.New(loader{g}, ents, units, words{}, nil, walksearch.Options{Params: walksearch.DefaultParams()})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Context(t.Context(), "Who founded the maker of the Zephyr widget?")
	if err != nil {
		t.Fatal(err)
	}
	pos := func(id string) int {
		return slices.IndexFunc(res.Ranking, func(r walksearch.Ranked) bool { return r.ID == id })
	}
	if pos("0") != 0 {
		t.Errorf("ranking %v: want text unit 0, which names the widget, first", res.Ranking)
	}
	if a, b := pos("3"), pos("1"); a < 0 || b >= 0 && a > b {
		t.Errorf("ranking %v: want unit 3 (the widget maker's founder) above unit 1 (another maker's)", res.Ranking)
	}
	if len(res.Seeds) == 0 || res.Seeds[0].Title != "ZEPHYR WIDGET" || !slices.Contains(res.Seeds[0].By, "lexical") {
		t.Errorf("seeds = %+v; want ZEPHYR WIDGET first, found by its words", res.Seeds)
	}
	named, err := s.Context(t.Context(), "Who founded Acme Corporation?")
	if err != nil {
		t.Fatal(err)
	}
	if len(named.Seeds) == 0 || named.Seeds[0].Title != "ACME CORPORATION" || !slices.Contains(named.Seeds[0].By, "named") {
		t.Errorf("seeds = %+v; want ACME CORPORATION first, named by the question", named.Seeds)
	}
	if len(res.Units) != len(g.Units) || res.Tokens == 0 {
		t.Errorf("context holds %d units (%d tokens); want every unit under the default budget", len(res.Units), res.Tokens)
	}
}

func TestWalkKeepsToTheBudget(t *testing.T) {
	g := companies()
	ents, units := indexes(t, g)
	for _, budget := range []int{40, 60, 100} {
		p := walksearch.DefaultParams()
		p.MaxContextTokens = budget
		s, err := walksearch.New(loader{g}, ents, units, words{}, nil, walksearch.Options{Params: p})
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.Context(t.Context(), "Who founded the maker of the Zephyr widget?")
		if err != nil {
			t.Fatal(err)
		}
		if res.Tokens > budget {
			t.Errorf("budget %d: context of %d tokens", budget, res.Tokens)
		}
		if len(res.Units) == 0 || res.Units[0].ID != res.Ranking[0].ID {
			t.Errorf("budget %d: units %v; want the best ranked first", budget, res.Units)
		}
	}
}

func TestWalkNothingMatches(t *testing.T) {
	g := companies()
	ents, units := indexes(t, g)
	p := walksearch.DefaultParams()
	s, err := walksearch.New(loader{g}, ents, units, words{}, nil, walksearch.Options{Params: p})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Context(t.Context(), "qwertyuiop asdfghjkl"); err == nil {
		t.Error("a question that matches nothing: want an error")
	}
}

func TestParamsValidate(t *testing.T) {
	for name, edit := range map[string]func(*walksearch.Params){
		"budget":    func(p *walksearch.Params) { p.MaxContextTokens = 0 },
		"damping 1": func(p *walksearch.Params) { p.Damping = 1 },
		"damping 0": func(p *walksearch.Params) { p.Damping = 0 },
		"share":     func(p *walksearch.Params) { p.UnitSeedShare = 1.5 },
		"sharpness": func(p *walksearch.Params) { p.SeedSharpness = 0 },
		"units":     func(p *walksearch.Params) { p.TextUnits = 0 },
	} {
		p := walksearch.DefaultParams()
		edit(&p)
		if err := p.Validate(); err == nil {
			t.Errorf("%s: Validate() = nil; want an error", name)
		}
	}
	if err := walksearch.DefaultParams().Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
}
