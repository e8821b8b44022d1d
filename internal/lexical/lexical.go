// Package lexical ranks texts by the words they share with a query: Okapi
// BM25 over an inverted index held in memory. Query modes use it beside
// the vector indexes, over text units and over entity titles and
// descriptions, where an exact name ("Gallu", "BWV 1033") is worth more
// than a close meaning.
//
// It is kgrag's own and small on purpose: the texts are a graph's text
// units or entities, already in memory or a snapshot away, read once per
// graph; a full-text library (bleve) would add an on-disk index, its
// analysers and a large dependency to hold what here is a map of
// postings, built for 1,000 passages in a few milliseconds.
package lexical

import (
	"math"
	"slices"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Okapi BM25's usual constants (Robertson and Zaragoza, 2009; Lucene's and
// Elasticsearch's defaults).
const (
	DefaultK1 = 1.2
	DefaultB  = 0.75
)

// Index is a BM25 index over texts numbered from 0 in the order added. It
// is safe for concurrent searches once built.
type Index struct {
	k1, b    float64
	lens     []int32
	total    int64
	postings map[string][]posting
}

type posting struct {
	doc, tf int32
}

// New returns an empty index with BM25's usual constants.
func New() *Index {
	return &Index{k1: DefaultK1, b: DefaultB, postings: map[string][]posting{}}
}

// Add indexes text as the next document and returns its number.
func (x *Index) Add(text string) int {
	doc := int32(len(x.lens))
	counts := map[string]int32{}
	n := int32(0)
	for _, t := range Terms(text) {
		counts[t]++
		n++
	}
	for t, c := range counts {
		x.postings[t] = append(x.postings[t], posting{doc, c})
	}
	x.lens = append(x.lens, n)
	x.total += int64(n)
	return int(doc)
}

// Len is the number of documents.
func (x *Index) Len() int { return len(x.lens) }

// Hit is a document and its BM25 score.
type Hit struct {
	Doc   int
	Score float64
}

// Search returns the k documents of highest score for query (every
// document with a term in common when k <= 0), best first, ties by
// document number. A query term counts once however often it is given.
func (x *Index) Search(query string, k int) []Hit {
	scores := x.Scores(query)
	hits := make([]Hit, 0, len(scores))
	for d, s := range scores {
		hits = append(hits, Hit{d, s})
	}
	slices.SortFunc(hits, func(a, b Hit) int {
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		return a.Doc - b.Doc
	})
	if k > 0 && len(hits) > k {
		hits = hits[:k]
	}
	return hits
}

// Scores are the BM25 scores of query's terms, by document; documents
// without any are left out.
func (x *Index) Scores(query string) map[int]float64 {
	scores := map[int]float64{}
	if len(x.lens) == 0 {
		return scores
	}
	n := float64(len(x.lens))
	avg := float64(x.total) / n
	seen := map[string]bool{}
	for _, t := range Terms(query) {
		if seen[t] {
			continue
		}
		seen[t] = true
		ps := x.postings[t]
		if len(ps) == 0 {
			continue
		}
		idf := x.IDF(t)
		for _, p := range ps {
			tf := float64(p.tf)
			norm := x.k1 * (1 - x.b + x.b*float64(x.lens[p.doc])/avg)
			scores[int(p.doc)] += idf * tf * (x.k1 + 1) / (tf + norm)
		}
	}
	return scores
}

// IDF is BM25's inverse document frequency of term (as Lucene computes
// it, never negative): 0 for a term no document holds.
func (x *Index) IDF(term string) float64 {
	df := float64(len(x.postings[term]))
	if df == 0 {
		return 0
	}
	return math.Log(1 + (float64(len(x.lens))-df+0.5)/(df+0.5))
}

// Terms splits s into the terms the index holds: lower-cased runs of
// letters and digits, accents removed (Alû is alu), English stop words
// left out. A possessive's "s" goes with its apostrophe.
func Terms(s string) []string {
	var out []string
	var b strings.Builder
	flush := func() {
		if b.Len() == 0 {
			return
		}
		t := b.String()
		b.Reset()
		if !stopWords[t] {
			out = append(out, t)
		}
	}
	for _, r := range norm.NFD.String(s) {
		switch {
		case unicode.Is(unicode.Mn, r):
			// a combining accent: dropped
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(unicode.ToLower(r))
		default:
			flush()
		}
	}
	flush()
	return out
}

// stopWords are the commonest English function words and the question
// words, which match every text and rank none (Lucene's English set and
// the wh-words).
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an and are as at be but by for if in into is it no not of on or
		such that the their then there these they this to was will with s t
		what which who whom whose when where why how does did do has have had were been being
		i you he she we his her its our your my me him them than so also from`) {
		m[w] = true
	}
	return m
}()
