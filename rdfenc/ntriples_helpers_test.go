package rdfenc_test

import (
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/kgrag/kgrag/rdf"
)

const (
	benchNS  = "https://kgrag.example.org/graphrag/"
	benchVoc = "https://kgrag.example.org/ns/graphrag#"
)

var benchWords = strings.Fields(`the company announced a partnership with
regional suppliers to expand production in Zürich and São Paulo while the
board said "growth" would continue; analysts noted risks from supply chains,
currency moves and regulation across markets 东京 and Kraków`)

// benchText returns n bytes or so of prose with the odd quote, newline and
// non-ASCII word, like GraphRAG descriptions.
func benchText(r *rand.Rand, n int) string {
	var sb strings.Builder
	for sb.Len() < n {
		if sb.Len() > 0 {
			if r.IntN(40) == 0 {
				sb.WriteString(".\n")
			} else {
				sb.WriteByte(' ')
			}
		}
		sb.WriteString(benchWords[r.IntN(len(benchWords))])
	}
	return sb.String()
}

// benchTriples returns realistic GraphRAG-like triples: entities of ten
// triples each, IRIs of about 60 bytes, literals of 20 to 1000 bytes.
func benchTriples(entities int) []rdf.Triple {
	r := rand.New(rand.NewPCG(1, 2))
	id := func(kind string, i int) rdf.Term {
		// e.g. https://kgrag.example.org/graphrag/entity/0000042-3f2a5c1e9b8d
		return rdf.IRI(benchNS + kind + "/" + strconv.Itoa(1000000+i) + "-" + strconv.FormatUint(r.Uint64()>>16, 16))
	}
	p := func(local string) rdf.Term { return rdf.IRI(benchVoc + local) }
	ts := make([]rdf.Triple, 0, entities*10)
	for i := 0; i < entities; i++ {
		s := id("entity", i)
		ts = append(ts,
			rdf.Triple{S: s, P: rdf.IRI(rdf.RDFType), O: p("Entity")},
			rdf.Triple{S: s, P: rdf.IRI(rdf.RDFSNS + "label"), O: rdf.String(strings.ToUpper(benchText(r, 20+r.IntN(20))))},
			rdf.Triple{S: s, P: p("entityType"), O: rdf.String("ORGANIZATION")},
			rdf.Triple{S: s, P: p("description"), O: rdf.LangString(benchText(r, 100+r.IntN(900)), "en")},
			rdf.Triple{S: s, P: p("degree"), O: rdf.Integer(int64(r.IntN(500)))},
			rdf.Triple{S: s, P: p("rank"), O: rdf.Double(r.Float64())},
			rdf.Triple{S: s, P: p("inCommunity"), O: id("community", r.IntN(100))},
			rdf.Triple{S: s, P: p("textUnit"), O: id("text-unit", r.IntN(5000))},
			rdf.Triple{S: s, P: p("textUnit"), O: id("text-unit", r.IntN(5000))},
			rdf.Triple{S: s, P: p("relatedTo"), O: id("entity", r.IntN(entities))},
		)
	}
	return ts
}
