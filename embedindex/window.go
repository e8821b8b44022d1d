package embedindex

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/kgrag/kgrag/internal/tokens"
)

// An embedding model reads a window of tokens (all-MiniLM-L6-v2 512, many
// others 512 to 8192) and the servers cut a longer text to it, most of
// them silently: the vector is then the vector of the text's head. A text
// longer than the window is therefore embedded in overlapping windows, a
// vector each. An index keeps them all, under ids that name the text and
// the window (WindowID), and a search counts a text once, by its best
// window (Distinct); where one vector per text is the contract (the
// de-duplication of entities), the windows' vectors are averaged, weighted
// by their length, as GraphRAG does (Whole).

// windowSep joins a text's id and a window's number in an index: the
// symbol for the unit separator (U+241F), which no GraphRAG id holds
// (they are UUIDs, hashes, numbers or titles), printable so that every
// store takes it as an id (Elasticsearch's bulk client quotes a control
// character in a way its parser refuses).
const windowSep = "\u241f"

// WindowID is the id of window n (from 0) of the text id: the id itself
// for the first window, so that a text read whole keeps its id.
func WindowID(id string, n int) string {
	if n == 0 {
		return id
	}
	return id + windowSep + strconv.Itoa(n)
}

// TextID is the id of the text a window id (WindowID) belongs to.
func TextID(windowID string) string {
	if i := strings.Index(windowID, windowSep); i >= 0 {
		return windowID[:i]
	}
	return windowID
}

// IsWindowID reports whether id names a window after a text's first.
func IsWindowID(id string) bool { return strings.Contains(id, windowSep) }

// Split cuts text into windows of at most size tokens of enc, each
// overlapping the one before by overlap tokens, as few as can be and of
// one length; a text of size tokens or fewer is one window, itself. The
// windows are substrings of text, cut between tokens.
func Split(enc *tokens.Encoder, text string, size, overlap int) []string {
	if size <= 0 {
		return []string{text}
	}
	toks := enc.Tokens(text)
	if len(toks) <= size {
		return []string{text}
	}
	text = tokens.ValidText(text) // what the spans index
	overlap = min(max(overlap, 0), size/2)
	// As few windows as size allows, all of one length: a short last
	// window would be a vector of a few sentences, which a small
	// embedder scores close to many questions.
	n := len(toks)
	count := (n - overlap + size - overlap - 1) / (size - overlap)
	length := (n + (count-1)*overlap + count - 1) / count
	step := length - overlap
	out := make([]string, 0, count)
	for start := 0; ; start += step {
		end := min(start+length, n)
		out = append(out, text[toks[start].Start:toks[end-1].End])
		if end == n {
			return out
		}
	}
}

// Overlap is the overlap of windows of size tokens: an eighth, as
// GraphRAG's chunks of 1200 overlap by 100 (150 here).
func Overlap(size int) int { return size / 8 }

// Windows are the texts to embed for a table once split: each text's
// windows, in order, with their ids (WindowID).
type Windows struct {
	IDs, Texts []string
	// Split counts the texts cut into more than one window.
	Split int
}

// SplitAll splits every text longer than size tokens (see Split); size
// 0 splits none.
func SplitAll(enc *tokens.Encoder, ids, texts []string, size int) Windows {
	var w Windows
	for i, t := range texts {
		parts := []string{t}
		if size > 0 {
			parts = Split(enc, t, size, Overlap(size))
		}
		if len(parts) > 1 {
			w.Split++
		}
		for n, p := range parts {
			w.IDs = append(w.IDs, WindowID(ids[i], n))
			w.Texts = append(w.Texts, p)
		}
	}
	return w
}

// Distinct returns the k best hits of distinct texts, best first, from a
// search that may return several windows of one text: search(n) must
// return the n best vectors, best first, or all of them when the index
// holds fewer. Each hit's ID is its text's (TextID). It asks for more
// until k texts are found or the index has no more.
func Distinct(ctx context.Context, k int, search func(ctx context.Context, n int) ([]Hit, error)) ([]Hit, error) {
	if k <= 0 {
		return search(ctx, k)
	}
	for n := k; ; n *= 2 {
		hits, err := search(ctx, n)
		if err != nil {
			return nil, err
		}
		out := make([]Hit, 0, k)
		seen := make(map[string]bool, len(hits))
		for _, h := range hits {
			id := TextID(h.ID)
			if seen[id] {
				continue
			}
			seen[id] = true
			out = append(out, Hit{ID: id, Score: h.Score})
			if len(out) == k {
				return out, nil
			}
		}
		if len(hits) < n || n >= 1<<30 {
			return out, nil
		}
	}
}

// Whole embeds each text as one vector: a text longer than size tokens
// is embedded in windows whose unit vectors are averaged, weighted by
// their tokens, and the mean scaled to unit length (GraphRAG's way with
// texts over its embedding model's limit); shorter texts are embedded as
// they are. size 0 embeds every text whole.
func Whole(ctx context.Context, e Embedder, enc *tokens.Encoder, texts []string, size int) ([][]float32, error) {
	if size <= 0 {
		return e.Embed(ctx, texts)
	}
	var flat []string
	var weights []float64
	bounds := make([]int, len(texts)+1)
	for i, t := range texts {
		for _, p := range Split(enc, t, size, Overlap(size)) {
			flat = append(flat, p)
			weights = append(weights, float64(max(enc.Count(p), 1)))
		}
		bounds[i+1] = len(flat)
	}
	vecs, err := e.Embed(ctx, flat)
	if err != nil {
		return nil, err
	}
	if len(vecs) != len(flat) {
		return nil, fmt.Errorf("embedindex: got %d vectors for %d windows", len(vecs), len(flat))
	}
	out := make([][]float32, len(texts))
	for i := range texts {
		lo, hi := bounds[i], bounds[i+1]
		if hi-lo == 1 {
			out[i] = vecs[lo]
			continue
		}
		mean := make([]float64, len(vecs[lo]))
		for j := lo; j < hi; j++ {
			n := norm(vecs[j])
			if n == 0 {
				continue
			}
			for d, x := range vecs[j] {
				mean[d] += weights[j] * float64(x) / n
			}
		}
		var sum float64
		for _, x := range mean {
			sum += x * x
		}
		v := make([]float32, len(mean))
		if sum > 0 {
			s := 1 / math.Sqrt(sum)
			for d, x := range mean {
				v[d] = float32(x * s)
			}
		}
		out[i] = v
	}
	return out, nil
}

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

// Cosine is the cosine similarity of a and b (0 when either is zero).
func Cosine(a, b []float32) float64 {
	var dot float64
	for i := range min(len(a), len(b)) {
		dot += float64(a[i]) * float64(b[i])
	}
	na, nb := norm(a), norm(b)
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / (na * nb)
}

// Probe is what ProbeWindow found of an embedding model's window, in
// tokens of the encoder it was given.
type Probe struct {
	// Tokens is the longest prefix the model reads: where it cuts, or
	// the whole probe text when it read all of it (AtLeast).
	Tokens int
	// AtLeast: the model read the whole probe text, so the window is
	// at least Tokens.
	AtLeast bool
	// Refuses: the server refuses a longer text (an error) rather than
	// cutting it silently.
	Refuses bool
	// Calls counts the embedding requests the probe made.
	Calls int
}

// probeTolerance is how close, in tokens, the probe finds the cut.
const probeTolerance = 8

// sameVector is the cosine above which two vectors are the same text's:
// a cut text gives exactly its head's vector (1.000, up to the float
// noise of batching); a prefix that lacks a few tokens scores lower.
const sameVector = 0.99995

// ProbeWindow finds how much of text the embedding model behind e reads,
// by embedding text and its prefixes: a model that cuts the text gives
// every prefix longer than its window the same vector as the whole text,
// and a server that refuses a text over the window fails on those
// prefixes. A binary search over prefix lengths (in tokens of enc) finds
// the window to within a few tokens in about ten calls. Use the longest
// text there is to embed: a window longer than text shows as AtLeast.
func ProbeWindow(ctx context.Context, e Embedder, enc *tokens.Encoder, text string, refused func(error) bool) (Probe, error) {
	toks := enc.Tokens(text)
	text = tokens.ValidText(text)
	n := len(toks)
	var p Probe
	prefix := func(l int) string { return text[:toks[l-1].End] }
	embed := func(s string) ([]float32, error) {
		p.Calls++
		v, err := e.Embed(ctx, []string{s})
		if err != nil {
			return nil, err
		}
		if len(v) != 1 {
			return nil, fmt.Errorf("embedindex: probe: got %d vectors for 1 text", len(v))
		}
		return v[0], nil
	}
	if n <= probeTolerance {
		return Probe{Tokens: n, AtLeast: true}, nil
	}
	full, err := embed(text)
	switch {
	case err != nil && refused(err):
		// The largest prefix the server takes: lo taken, hi refused.
		p.Refuses = true
		lo, hi := 0, n
		for hi-lo > probeTolerance {
			mid := (lo + hi) / 2
			_, err := embed(prefix(mid))
			switch {
			case err == nil:
				lo = mid
			case refused(err):
				hi = mid
			default:
				return p, err
			}
		}
		if lo == 0 {
			return p, errors.New("embedindex: probe: the server refused even the shortest prefix")
		}
		p.Tokens = lo
		return p, nil
	case err != nil:
		return p, err
	}
	// Is the text read to its end? A prefix a few tokens short differs.
	short, err := embed(prefix(n - probeTolerance))
	if err != nil {
		return p, err
	}
	if Cosine(short, full) < sameVector {
		p.Tokens, p.AtLeast = n, true
		return p, nil
	}
	// lo differs from the whole text, hi gives its vector.
	lo, hi := 0, n-probeTolerance
	for hi-lo > probeTolerance {
		mid := (lo + hi) / 2
		v, err := embed(prefix(mid))
		if err != nil {
			return p, err
		}
		if Cosine(v, full) >= sameVector {
			hi = mid
		} else {
			lo = mid
		}
	}
	// The cut is between lo and hi: lo is read whole for sure.
	p.Tokens = lo
	return p, nil
}
