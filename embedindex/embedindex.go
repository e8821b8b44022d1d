package embedindex

import (
	"context"
	"errors"
	"fmt"
)

// Embedder turns texts into vectors, one per text in order, all of one
// dimension. Implementations are safe for concurrent use. Embedding the
// same texts again gives the same vectors (for a deterministic model), so
// calls may be retried.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// Model names the embedding model; vectors of different models are
	// not comparable, so indexes and caches record it.
	Model() string
}

// Counter receives progress: Add is called with the number of texts
// embedded (cache hits included) as each batch completes. Implementations
// must be safe for concurrent use; *ui.Progress is one.
type Counter interface {
	Add(n int64)
}

// Hit is one search result: the id given when the vector was added and
// its cosine similarity to the query, in [-1, 1].
type Hit struct {
	ID    string
	Score float32
}

// MetricCosine is the only metric so far: vectors are normalised when
// added and queries when searched, so a dot product is the cosine.
const MetricCosine = "cosine"

// Info describes an index: the model and dimension its vectors came from,
// how many it holds, its metric, and where it lives (for messages).
type Info struct {
	Model  string
	Dim    int
	Count  int
	Metric string
	Path   string
	// ANN names the approximate search the index answers with ("hnsw");
	// empty means every search is exact.
	ANN string
	// Recall is recall@10 against exact search, measured when the index
	// was built, at EfSearch (the search's beam width); 0 when exact.
	Recall   float64
	EfSearch int
	// Windows counts the vectors of windows after a text's first: Count
	// less Windows is the number of texts. Searches return each text
	// once (Distinct).
	Windows int
}

// Index finds the nearest stored vectors to a query. Implementations are
// safe for concurrent use once opened.
type Index interface {
	// Search returns the k best hits, best first; ties in score are broken
	// by id, so results are repeatable. Fewer than k hits come back when
	// the index holds fewer vectors. A query whose length differs from
	// Info().Dim fails with an error matching ErrDimMismatch. Search does
	// not modify the index.
	Search(ctx context.Context, vec []float32, k int) ([]Hit, error)
	Info() Info
	// Close releases what the index holds (a flat file's memory
	// mapping), after searches under way return; a Search after it may
	// fail, and hits already returned stay valid. Closing twice is
	// harmless.
	Close() error
}

// Kinds of mismatch between an index and a query, for errors.Is.
var (
	ErrModelMismatch = errors.New("embedding model mismatch")
	ErrDimMismatch   = errors.New("embedding dimension mismatch")
)

// MismatchError refuses a query whose vector came from another model or
// has another dimension than the index: the scores would be meaningless,
// not merely worse. It names both sides and the flags that fix it.
type MismatchError struct {
	Path       string // the index
	IndexModel string
	IndexDim   int
	QueryModel string // empty when only the dimension is known
	QueryDim   int    // 0 when only the model is known
	Kind       error  // ErrModelMismatch or ErrDimMismatch
}

func (e *MismatchError) Error() string {
	if e.Kind == ErrModelMismatch {
		return fmt.Sprintf("embedindex: index %s was built with embedding model %q, but the question is embedded with %q: "+
			"use --embed-model %s, or rebuild the index with kgrag embed --embed-model %s",
			e.Path, e.IndexModel, e.QueryModel, e.IndexModel, e.QueryModel)
	}
	q := "the query"
	if e.QueryModel != "" {
		q = fmt.Sprintf("model %q", e.QueryModel)
	}
	return fmt.Sprintf("embedindex: index %s holds %d-dimensional vectors (model %q), but %s gave %d dimensions: "+
		"use the index's model with --embed-model %s, or rebuild the index with kgrag embed",
		e.Path, e.IndexDim, e.IndexModel, q, e.QueryDim, e.IndexModel)
}

// Unwrap lets errors.Is match the kind.
func (e *MismatchError) Unwrap() error { return e.Kind }

// Check refuses a query embedded by model into dim dimensions unless the
// index was built with the same; a zero dim or empty model is not
// checked.
func Check(info Info, model string, dim int) error {
	if model != "" && info.Model != model {
		return &MismatchError{Path: info.Path, IndexModel: info.Model, IndexDim: info.Dim,
			QueryModel: model, QueryDim: dim, Kind: ErrModelMismatch}
	}
	if dim != 0 && info.Dim != dim {
		return &MismatchError{Path: info.Path, IndexModel: info.Model, IndexDim: info.Dim,
			QueryModel: model, QueryDim: dim, Kind: ErrDimMismatch}
	}
	return nil
}

// Query embeds text with e and searches idx for its k nearest vectors,
// refusing before any request when e's model is not the index's, and
// after it when the dimension differs.
func Query(ctx context.Context, idx Index, e Embedder, text string, k int) ([]Hit, error) {
	info := idx.Info()
	if err := Check(info, e.Model(), 0); err != nil {
		return nil, err
	}
	vecs, err := e.Embed(ctx, []string{text})
	if err != nil {
		return nil, fmt.Errorf("embedindex: embed the question: %w", err)
	}
	if len(vecs) != 1 {
		return nil, fmt.Errorf("embedindex: embed the question: got %d vectors for 1 text", len(vecs))
	}
	if err := Check(info, e.Model(), len(vecs[0])); err != nil {
		return nil, err
	}
	return idx.Search(ctx, vecs[0], k)
}
