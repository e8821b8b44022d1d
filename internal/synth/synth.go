// Package synth generates plausible GraphRAG 3.x datasets of any size from a
// seed, for benchmarks and tests that need more data than the real samples
// (a few hundred entities) hold.
//
// The same seed and Sizes give the same Dataset, and Write3x writes it to
// the same bytes:
//
//	ds := synth.Generate(1, synth.DefaultSizes())
//	err := graphrag.Write3x(ctx, dir, ds)
//
// The text is random words, but the structure is GraphRAG's: entities occur
// in text units, relationships join existing entities (mostly within a
// community) with combined_degree = the sum of the end degrees, communities
// form a three-level hierarchy (parent, children, entity_ids of every level),
// every community has a report with findings, and some claims (covariates)
// name entities. The Dataset is what graphrag.Open returns for the files
// Write3x writes from it.
package synth

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/kgrag/kgrag/graphrag"
)

// Sizes sets how many records Generate makes. Documents and Covariates may
// be 0: they then follow from TextUnits (one document per 20 units) and
// Entities (one claim per 50 entities).
type Sizes struct {
	Entities      int
	Relationships int
	TextUnits     int
	Communities   int
	Documents     int
	Covariates    int
}

// DefaultSizes is the benchmark dataset: 100k entities, 300k relationships,
// 20k text units and 5k communities.
func DefaultSizes() Sizes {
	return Sizes{Entities: 100_000, Relationships: 300_000, TextUnits: 20_000, Communities: 5_000}
}

// vocabulary feeds the random text; a constant so the package holds no
// mutable state.
const vocabulary = `the of and to in a is that for it as was with be by on not he this are or his from at which ` +
	`but have an they you were her she there been one all we their has would when if so no what up out ` +
	`who them some could more then time into only other new these two may first any like now my over ` +
	`such our man me even most made after also did many before must through back years where much your ` +
	`way well down should because each just those people how too little state good very make world still ` +
	`own see men work long get here between both life being under never day same another know while last ` +
	`might us great old year off come since against go came right used take three council river market ` +
	`harbour merchant ledger lantern winter spirit festival charity clerk counting house bridge railway ` +
	`mill factory guild treaty province village archive court bishop colony ship cargo storm debt ` +
	`inheritance engine furnace telegraph newspaper theatre orchestra school hospital garden laboratory`

// name parts for entity titles.
const (
	firstParts  = `NORTH SOUTH GREY IRON SILVER OLD NEW HIGH LOW RED BLACK WHITE GREEN GOLDEN STONE EAST WEST`
	secondParts = `HARBOUR COMPANY GUILD MARKET BRIDGE ABBEY COUNCIL MILL PRESS SOCIETY RAILWAY BANK COURT FAIR LEAGUE TRUST`
	entityTypes = `PERSON ORGANIZATION GEO EVENT`
)

type gen struct {
	rng   *rand.Rand
	words []string
}

func (g *gen) sentence(minChars int) string {
	var b strings.Builder
	b.Grow(minChars + 16)
	first := true
	for b.Len() < minChars {
		w := g.words[g.rng.IntN(len(g.words))]
		if first {
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
			first = false
		} else {
			b.WriteByte(' ')
			b.WriteString(w)
		}
		if g.rng.IntN(12) == 0 {
			b.WriteString(".")
			first = true
		}
	}
	b.WriteString(".")
	return b.String()
}

// hex returns n random lowercase hex digits (ids look like GraphRAG's).
func (g *gen) hex(n int) string {
	const digits = "0123456789abcdef"
	b := make([]byte, n)
	for i := range b {
		b[i] = digits[g.rng.IntN(16)]
	}
	return string(b)
}

func (g *gen) uuid() string {
	h := g.hex(32)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// Generate makes a GraphRAG 3.x Dataset from seed. It does no I/O.
func Generate(seed int64, sizes Sizes) *graphrag.Dataset {
	g := &gen{rng: rand.New(rand.NewPCG(uint64(seed), 0x6b67726167)), words: strings.Fields(vocabulary)}
	if sizes.Documents == 0 && sizes.TextUnits > 0 {
		sizes.Documents = max(1, sizes.TextUnits/20)
	}
	if sizes.Covariates == 0 {
		sizes.Covariates = sizes.Entities / 50
	}
	ds := &graphrag.Dataset{Release: graphrag.Release3}
	g.textUnits(ds, sizes)
	g.entities(ds, sizes)
	levels := g.communities(ds, sizes)
	g.relationships(ds, sizes, levels)
	g.covariates(ds, sizes)
	g.membership(ds, levels)
	g.reports(ds)
	ds.ComputeWeights()
	return ds
}

func (g *gen) textUnits(ds *graphrag.Dataset, s Sizes) {
	ds.Documents = make([]graphrag.Document, s.Documents)
	for d := range ds.Documents {
		ds.Documents[d] = graphrag.Document{
			ID:              g.hex(128),
			HumanReadableID: strconv.Itoa(d),
			Title:           fmt.Sprintf("document-%06d.txt", d),
			CreationDate:    fmt.Sprintf("2026-01-%02d 10:%02d:00 +0000", 1+d%28, d%60),
		}
	}
	ds.TextUnits = make([]graphrag.TextUnit, s.TextUnits)
	texts := make([][]string, s.Documents)
	for i := range ds.TextUnits {
		text := g.sentence(1150 + g.rng.IntN(100))
		d := 0
		if s.Documents > 0 {
			d = i * s.Documents / s.TextUnits
		}
		tu := graphrag.TextUnit{
			ID:              g.hex(128),
			HumanReadableID: strconv.Itoa(i),
			Text:            text,
			NTokens:         int64(len(strings.Fields(text)) * 13 / 10),
			HasNTokens:      true,
		}
		if s.Documents > 0 {
			tu.DocumentIDs = []string{ds.Documents[d].ID}
			ds.Documents[d].TextUnitIDs = append(ds.Documents[d].TextUnitIDs, tu.ID)
			texts[d] = append(texts[d], text)
		}
		ds.TextUnits[i] = tu
	}
	for d := range ds.Documents {
		ds.Documents[d].Text = strings.Join(texts[d], "\n")
	}
}

func (g *gen) entities(ds *graphrag.Dataset, s Sizes) {
	first, second, types := strings.Fields(firstParts), strings.Fields(secondParts), strings.Fields(entityTypes)
	ds.Entities = make([]graphrag.Entity, s.Entities)
	for i := range ds.Entities {
		e := graphrag.Entity{
			ID:              g.uuid(),
			HumanReadableID: strconv.Itoa(i),
			Title:           fmt.Sprintf("%s %s %d", first[g.rng.IntN(len(first))], second[g.rng.IntN(len(second))], i),
			Type:            types[g.rng.IntN(len(types))],
			Description:     g.sentence(180 + g.rng.IntN(60)),
			HasFrequency:    true,
			HasDegree:       true,
		}
		if s.TextUnits > 0 {
			n := 1 + g.rng.IntN(4)
			seen := map[int]bool{}
			for range n {
				t := g.rng.IntN(s.TextUnits)
				if seen[t] {
					continue
				}
				seen[t] = true
				e.TextUnitIDs = append(e.TextUnitIDs, ds.TextUnits[t].ID)
				ds.TextUnits[t].EntityIDs = append(ds.TextUnits[t].EntityIDs, e.ID)
			}
		}
		e.Frequency = int64(len(e.TextUnitIDs))
		ds.Entities[i] = e
	}
}

// levels records the hierarchy: per level, the community row indices, and
// per entity its community row index at each level (-1 for none).
type levels struct {
	rows   [][]int // level -> community row indices
	member [][]int // level -> entity index -> community row index
}

// communities lays out up to three levels (5% roots, 25% middle, the rest
// leaves), numbered from 0 as GraphRAG numbers them, and places every entity
// in a leaf and so in each ancestor.
func (g *gen) communities(ds *graphrag.Dataset, s Sizes) levels {
	n := s.Communities
	var counts []int
	switch {
	case n <= 0:
		return levels{}
	case n < 3:
		counts = []int{n}
	default:
		n0 := max(1, n/20)
		n1 := max(1, n/4)
		counts = []int{n0, n1, n - n0 - n1}
	}
	lv := levels{}
	ds.Communities = make([]graphrag.Community, 0, n)
	for l, c := range counts {
		var rows []int
		for j := range c {
			num := len(ds.Communities)
			com := graphrag.Community{
				ID:              g.uuid(),
				HumanReadableID: strconv.Itoa(num),
				Community:       strconv.Itoa(num),
				Level:           int64(l),
				Title:           "Community " + strconv.Itoa(num),
				Period:          "2026-01-15",
				HasSize:         true,
			}
			if l > 0 {
				prev := lv.rows[l-1]
				p := prev[j%len(prev)]
				com.Parent = ds.Communities[p].Community
				ds.Communities[p].Children = append(ds.Communities[p].Children, com.Community)
			}
			rows = append(rows, num)
			ds.Communities = append(ds.Communities, com)
		}
		lv.rows = append(lv.rows, rows)
	}
	parentRow := func(row int) int {
		p, _ := strconv.Atoi(ds.Communities[row].Parent)
		return p
	}
	deepest := len(counts) - 1
	lv.member = make([][]int, len(counts))
	for l := range lv.member {
		lv.member[l] = make([]int, len(ds.Entities))
	}
	for e := range ds.Entities {
		leaves := lv.rows[deepest]
		row := leaves[g.rng.IntN(len(leaves))]
		for l := deepest; l >= 0; l-- {
			lv.member[l][e] = row
			if l > 0 {
				row = parentRow(row)
			}
		}
	}
	return lv
}

func (g *gen) relationships(ds *graphrag.Dataset, s Sizes, lv levels) {
	ne := len(ds.Entities)
	if ne < 2 {
		return
	}
	// Entities per leaf community, so most edges stay inside one.
	var byLeaf map[int][]int
	if len(lv.member) > 0 {
		byLeaf = map[int][]int{}
		for e, c := range lv.member[len(lv.member)-1] {
			byLeaf[c] = append(byLeaf[c], e)
		}
	}
	ends := make([][2]int, s.Relationships)
	degree := make([]int64, ne)
	for i := range ends {
		a := g.rng.IntN(ne)
		b := -1
		if byLeaf != nil && g.rng.IntN(10) < 7 {
			peers := byLeaf[lv.member[len(lv.member)-1][a]]
			b = peers[g.rng.IntN(len(peers))]
		}
		for b < 0 || b == a {
			b = g.rng.IntN(ne)
		}
		ends[i] = [2]int{a, b}
		degree[a]++
		degree[b]++
	}
	for e := range ds.Entities {
		ds.Entities[e].Degree = degree[e]
	}
	tuIndex := make(map[string]int, len(ds.TextUnits))
	for i, tu := range ds.TextUnits {
		tuIndex[tu.ID] = i
	}
	ds.Relationships = make([]graphrag.Relationship, len(ends))
	for i, ab := range ends {
		src, dst := &ds.Entities[ab[0]], &ds.Entities[ab[1]]
		r := graphrag.Relationship{
			ID:              g.uuid(),
			HumanReadableID: strconv.Itoa(i),
			Source:          src.Title,
			Target:          dst.Title,
			SourceID:        src.ID,
			TargetID:        dst.ID,
			Description:     src.Title + " and " + dst.Title + ": " + g.sentence(80+g.rng.IntN(80)),
			Weight:          float64(1+g.rng.IntN(20)) / 2,
			HasWeight:       true,
			Rank:            degree[ab[0]] + degree[ab[1]],
			HasRank:         true,
		}
		if len(src.TextUnitIDs) > 0 {
			tu := src.TextUnitIDs[g.rng.IntN(len(src.TextUnitIDs))]
			r.TextUnitIDs = []string{tu}
			t := &ds.TextUnits[tuIndex[tu]]
			t.RelationshipIDs = append(t.RelationshipIDs, r.ID)
		}
		ds.Relationships[i] = r
	}
}

func (g *gen) covariates(ds *graphrag.Dataset, s Sizes) {
	if len(ds.Entities) == 0 {
		return
	}
	tuIndex := make(map[string]int, len(ds.TextUnits))
	for i, tu := range ds.TextUnits {
		tuIndex[tu.ID] = i
	}
	kinds := []string{"OWNERSHIP", "AUTHORSHIP", "FRAUD", "DONATION", "EMPLOYMENT"}
	status := []string{"TRUE", "FALSE", "SUSPECTED"}
	ds.Covariates = make([]graphrag.Covariate, s.Covariates)
	for i := range ds.Covariates {
		subj := &ds.Entities[g.rng.IntN(len(ds.Entities))]
		obj, objID := "NONE", ""
		if g.rng.IntN(2) == 0 {
			o := &ds.Entities[g.rng.IntN(len(ds.Entities))]
			obj, objID = o.Title, o.ID
		}
		c := graphrag.Covariate{
			ID:              g.uuid(),
			HumanReadableID: strconv.Itoa(i),
			CovariateType:   "claim",
			Type:            kinds[g.rng.IntN(len(kinds))],
			Description:     subj.Title + " " + g.sentence(100),
			SubjectID:       subj.Title,
			ObjectID:        obj,
			SubjectEntityID: subj.ID,
			ObjectEntityID:  objID,
			Status:          status[g.rng.IntN(len(status))],
			StartDate:       fmt.Sprintf("18%02d-01-01T00:00:00", 20+g.rng.IntN(60)),
			EndDate:         fmt.Sprintf("18%02d-12-31T00:00:00", 80+g.rng.IntN(19)),
			SourceText:      g.sentence(60),
		}
		if len(subj.TextUnitIDs) > 0 {
			c.TextUnitID = subj.TextUnitIDs[0]
			t := &ds.TextUnits[tuIndex[c.TextUnitID]]
			t.CovariateIDs = append(t.CovariateIDs, c.ID)
		}
		ds.Covariates[i] = c
	}
}

// membership fills each community's entity_ids, relationship_ids (both ends
// inside) and text_unit_ids (those of its entities, first seen first).
func (g *gen) membership(ds *graphrag.Dataset, lv levels) {
	for l := range lv.member {
		for e, row := range lv.member[l] {
			c := &ds.Communities[row]
			c.EntityIDs = append(c.EntityIDs, ds.Entities[e].ID)
		}
	}
	entIndex := make(map[string]int, len(ds.Entities))
	for i, e := range ds.Entities {
		entIndex[e.ID] = i
	}
	// Entities list their communities in community order, as Open does.
	for _, c := range ds.Communities {
		for _, id := range c.EntityIDs {
			e := &ds.Entities[entIndex[id]]
			e.Communities = append(e.Communities, c.Community)
		}
	}
	for _, r := range ds.Relationships {
		a, b := entIndex[r.SourceID], entIndex[r.TargetID]
		for l := range lv.member {
			if ca := lv.member[l][a]; ca == lv.member[l][b] {
				ds.Communities[ca].RelationshipIDs = append(ds.Communities[ca].RelationshipIDs, r.ID)
			}
		}
	}
	seen := map[string]bool{}
	for i := range ds.Communities {
		c := &ds.Communities[i]
		clear(seen)
		for _, id := range c.EntityIDs {
			for _, tu := range ds.Entities[entIndex[id]].TextUnitIDs {
				if !seen[tu] {
					seen[tu] = true
					c.TextUnitIDs = append(c.TextUnitIDs, tu)
				}
			}
		}
		c.Size = int64(len(c.EntityIDs))
	}
}

func (g *gen) reports(ds *graphrag.Dataset) {
	type finding struct {
		Summary     string `json:"summary"`
		Explanation string `json:"explanation"`
	}
	type content struct {
		Title             string    `json:"title"`
		Summary           string    `json:"summary"`
		Rating            float64   `json:"rating"`
		RatingExplanation string    `json:"rating_explanation"`
		Findings          []finding `json:"findings"`
	}
	entTitle := make(map[string]string, len(ds.Entities))
	for _, e := range ds.Entities {
		entTitle[e.ID] = e.Title
	}
	for i := range ds.Communities {
		c := &ds.Communities[i]
		lead := "an empty corner of the graph"
		if len(c.EntityIDs) > 0 {
			lead = entTitle[c.EntityIDs[0]]
		}
		r := &graphrag.CommunityReport{
			ID:              g.hex(32),
			HumanReadableID: c.HumanReadableID,
			Community:       c.Community,
			Level:           c.Level,
			Title:           lead + " and its circle",
			Summary:         g.sentence(300 + g.rng.IntN(200)),
			Rank:            float64(10+g.rng.IntN(80)) / 10,
			HasRank:         true,
			RankExplanation: g.sentence(120 + g.rng.IntN(60)),
			Period:          c.Period,
			Size:            c.Size,
			HasSize:         true,
		}
		var full strings.Builder
		full.WriteString("# " + r.Title + "\n\n" + r.Summary + "\n\n")
		cj := content{Title: r.Title, Summary: r.Summary, Rating: r.Rank, RatingExplanation: r.RankExplanation}
		for range 3 + g.rng.IntN(3) {
			f := graphrag.Finding{Summary: g.sentence(50), Explanation: g.sentence(250 + g.rng.IntN(150))}
			r.Findings = append(r.Findings, f)
			cj.Findings = append(cj.Findings, finding(f))
			full.WriteString("## " + f.Summary + "\n\n" + f.Explanation + "\n\n")
		}
		r.FullContent = full.String()
		b, err := json.MarshalIndent(cj, "", "    ")
		if err != nil {
			panic(err) // marshalling plain strings and floats cannot fail
		}
		r.FullContentJSON = string(b)
		c.Report = r
	}
}
